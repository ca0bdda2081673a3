// The terminal sanitizer on the strings servers actually send to break terminals: escape
// sequences, C1 controls, bidi overrides, zero-width and wide characters, invalid UTF-8.
import TerminalText
import Testing

@Suite("Terminal text")
struct TerminalTextTests {
    /// Whether text could make a terminal act rather than print: any C0, DEL, C1 or format scalar.
    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { TerminalText.needsEscape($0) }
    }

    @Test("C0, DEL and C1 controls show as escapes, never as themselves")
    func controls() {
        #expect(TerminalText.escaped("OK\u{1b}]0;pwned\u{07}\u{1b}[2J") == "OK\\x1b]0;pwned\\x07\\x1b[2J")
        #expect(TerminalText.escaped("a\u{7f}b\u{9b}31m") == "a\\x7fb\\u009b31m")
        #expect(TerminalText.escaped("line\r\nnext\tcol\u{0}") == "line\\r\\nnext\\tcol\\x00")
        #expect(TerminalText.escaped("plain text") == "plain text")
    }

    @Test("bidi overrides, zero-width and other format characters show as escapes")
    func formatCharacters() {
        #expect(TerminalText.escaped("evil\u{202e}gpj.exe") == "evil\\u202egpj.exe")
        #expect(TerminalText.escaped("pay\u{200b}pal\u{feff}") == "pay\\u200bpal\\ufeff")
        #expect(TerminalText.escaped("\u{2066}x\u{2069}") == "\\u2066x\\u2069")
        #expect(TerminalText.escaped("a\u{2028}b") == "a\\u2028b")
        #expect(TerminalText.escaped("tag\u{E0041}") == "tag\\ue0041")
    }

    @Test("display width per grapheme: wide takes two cells, combining marks none")
    func widths() {
        #expect(TerminalText.width("abc") == 3)
        #expect(TerminalText.width("中文") == 4)
        #expect(TerminalText.width("e\u{301}") == 1)
        #expect(TerminalText.width("🙂") == 2)
        #expect(TerminalText.width("\u{1b}") == 4)
        #expect(TerminalText.padded("中", to: 4) == "中  ")
        #expect(TerminalText.prefix("中文字", cells: 5) == "中文")
    }

    @Test("marks without a base, and marks piled past the cap, show as escapes")
    func marks() {
        #expect(TerminalText.escaped("\u{301}x") == "\\u0301x")
        let zalgo = "a" + String(repeating: "\u{301}", count: 10)
        let shown = TerminalText.escaped(zalgo)
        #expect(shown.unicodeScalars.filter { $0 == "\u{301}" }.count == TerminalText.maximumMarksPerCharacter)
        #expect(shown.contains("\\u0301"))
    }

    @Test("bytes that are not UTF-8 show as \\xNN; the valid rest is kept")
    func invalidBytes() {
        #expect(TerminalText.escaped(bytes: [0x61, 0xff, 0x62, 0x1b, 0xe4, 0xb8, 0xad]) == "a\\xffb\\x1b中")
        #expect(TerminalText.escaped(bytes: [0xc0, 0x80]) == "\\xc0\\x80")
    }

    @Test("lines keep their breaks, each line escaped")
    func lines() {
        #expect(TerminalText.escapedLines("error: \u{1b}[31m\nusage: x") == "error: \\x1b[31m\nusage: x")
    }

    @Test("no output ever carries a control, whatever the input")
    func neverEmitsControls() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0..<24, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            let shown = TerminalText.escaped(bytes: bytes)
            #expect(!Self.hasControl(shown), "\(bytes)")
            #expect(!Self.hasControl(TerminalText.escaped(String(decoding: bytes, as: UTF8.self))), "\(bytes)")
        }
    }
}
