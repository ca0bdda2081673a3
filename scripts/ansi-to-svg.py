#!/usr/bin/env python3
# Turns a terminal capture with colours (`tmux capture-pane -e -p`) into an SVG picture, one
# cell per character on a fixed grid, so the README shows the console as a real session drew it.
"""Usage: ansi-to-svg.py WIDTH HEIGHT < capture.txt > picture.svg

Reads text with SGR escape sequences (bold, dim, reverse, the 16 colours, 256 colours and
24-bit colours) as tmux writes them, and draws each run of one style as an SVG <text> placed
on the cell grid, with a rectangle behind it when it has a background.
"""

import html
import re
import sys
import unicodedata

CELL_WIDTH = 8.4
CELL_HEIGHT = 17
FONT_SIZE = 14
BACKGROUND = "#1d1f21"
FOREGROUND = "#d0d0d0"
# xterm's 16 colours, softened a little for a page.
PALETTE = [
    "#1d1f21", "#cc6666", "#8fbf6f", "#e0c070", "#81a2be", "#b294bb", "#70c0c0", "#d0d0d0",
    "#666666", "#ff7b7b", "#b5e890", "#f6e08a", "#a3c4e6", "#d6b2de", "#94e2e2", "#ffffff",
]
SGR = re.compile(r"\x1b\[([0-9;:]*)m")
OTHER_ESCAPE = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07]*\x07|[()][A-Za-z0-9])")


def colour_256(n):
    """The colour of entry n of the 256-colour table."""
    if n < 16:
        return PALETTE[n]
    if n < 232:
        n -= 16
        levels = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (levels[n // 36], levels[(n // 6) % 6], levels[n % 6])
    grey = 8 + (n - 232) * 10
    return "#%02x%02x%02x" % (grey, grey, grey)


class Style:
    def __init__(self):
        self.fg = None
        self.bg = None
        self.bold = False
        self.dim = False
        self.reverse = False

    def copy(self):
        other = Style()
        other.__dict__.update(self.__dict__)
        return other

    def key(self):
        return (self.fg, self.bg, self.bold, self.dim, self.reverse)

    def apply(self, codes):
        """Applies the parameters of one SGR sequence."""
        numbers = [int(c) if c else 0 for c in re.split("[;:]", codes)] if codes else [0]
        i = 0
        while i < len(numbers):
            n = numbers[i]
            if n == 0:
                self.__init__()
            elif n == 1:
                self.bold = True
            elif n == 2:
                self.dim = True
            elif n == 22:
                self.bold = self.dim = False
            elif n == 7:
                self.reverse = True
            elif n == 27:
                self.reverse = False
            elif 30 <= n <= 37:
                self.fg = PALETTE[n - 30]
            elif 90 <= n <= 97:
                self.fg = PALETTE[n - 90 + 8]
            elif n == 39:
                self.fg = None
            elif 40 <= n <= 47:
                self.bg = PALETTE[n - 40]
            elif 100 <= n <= 107:
                self.bg = PALETTE[n - 100 + 8]
            elif n == 49:
                self.bg = None
            elif n in (38, 48) and i + 1 < len(numbers):
                if numbers[i + 1] == 5 and i + 2 < len(numbers):
                    colour = colour_256(numbers[i + 2])
                    i += 2
                elif numbers[i + 1] == 2 and i + 4 < len(numbers):
                    colour = "#%02x%02x%02x" % tuple(numbers[i + 2 : i + 5])
                    i += 4
                else:
                    colour = None
                if n == 38:
                    self.fg = colour
                else:
                    self.bg = colour
            i += 1

    def colours(self):
        """The foreground and background as drawn (reverse swaps them; dim fades the text)."""
        fg = self.fg or FOREGROUND
        bg = self.bg
        if self.reverse:
            fg, bg = (bg or BACKGROUND), fg
        return fg, bg


def width(character):
    return 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1


def cells(line, style):
    """The line's characters with their styles and columns: [(column, character, style)].

    `style` is the one in force where the line starts, and is left as the line ends it: tmux
    does not repeat a style that goes on across a line break.
    """
    out = []
    column = 0
    position = 0
    while position < len(line):
        match = SGR.match(line, position)
        if match:
            style.apply(match.group(1))
            position = match.end()
            continue
        other = OTHER_ESCAPE.match(line, position)
        if other:
            position = other.end()
            continue
        character = line[position]
        position += 1
        if unicodedata.category(character) in ("Cc", "Cf"):
            continue
        out.append((column, character, style.copy()))
        column += width(character)
    return out


def runs(line_cells):
    """Groups neighbouring cells of one style into runs: [(column, text, columns, style)]."""
    grouped = []
    for column, character, style in line_cells:
        if grouped and grouped[-1][3].key() == style.key() and grouped[-1][0] + grouped[-1][2] == column:
            first, text, count, _ = grouped[-1]
            grouped[-1] = (first, text + character, count + width(character), style)
        else:
            grouped.append((column, character, width(character), style))
    return grouped


def svg(capture, columns, rows):
    lines = capture.split("\n")[:rows]
    width_px = columns * CELL_WIDTH + 16
    height_px = rows * CELL_HEIGHT + 16
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">'
        % (width_px, height_px, width_px, height_px),
        '<rect width="100%%" height="100%%" rx="6" fill="%s"/>' % BACKGROUND,
        '<g transform="translate(8 8)" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
        'font-size="%d" xml:space="preserve">' % FONT_SIZE,
    ]
    carried = Style()
    for row, line in enumerate(lines):
        y = row * CELL_HEIGHT
        for column, text, count, style in runs(cells(line, carried)):
            fg, bg = style.colours()
            x = column * CELL_WIDTH
            if bg:
                parts.append(
                    '<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>'
                    % (x, y, count * CELL_WIDTH, CELL_HEIGHT, bg)
                )
            if not text.strip():
                continue
            attributes = 'fill="%s"' % fg
            if style.bold:
                attributes += ' font-weight="bold"'
            if style.dim:
                attributes += ' fill-opacity="0.6"'
            parts.append(
                '<text x="%.1f" y="%.1f" textLength="%.1f" lengthAdjust="spacingAndGlyphs" %s>%s</text>'
                % (x, y + CELL_HEIGHT - 4, count * CELL_WIDTH, attributes, html.escape(text))
            )
    parts.append("</g></svg>")
    return "\n".join(parts) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.stdout.write(svg(sys.stdin.read(), int(sys.argv[1]), int(sys.argv[2])))


if __name__ == "__main__":
    main()
