import TerminalText
// Text from a service as it is kept: every control, line break, C1 control, separator and bidi
// override escaped where it enters, cut to a length, and unchanged when escaped again for a screen.
import Testing

@Suite("Text kept from a service")
struct ServiceTextTests {
    static let hostile =
        "\u{1b}]0;pwned\u{07}\u{1b}[2J\r\nforged\u{85}a\u{2028}b\u{2029}c\u{202e}d\u{2066}e\u{9b}31m\u{0}"

    @Test("C0 and C1 controls, CR, LF, NEL, U+2028/2029 and bidi overrides all become escapes")
    func everyKind() {
        let kept = TerminalText.escaped(Self.hostile, cutAt: 200)
        #expect(!kept.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        for escape in [
            "\\x1b", "\\x07", "\\r", "\\n", "\\u0085", "\\u2028", "\\u2029", "\\u202e", "\\u2066", "\\u009b",
        ] {
            #expect(kept.contains(escape), "\(escape) missing from \(kept)")
        }
        #expect(TerminalText.escaped(kept) == kept, "escaping again changed the kept text")
        #expect(TerminalText.escaped(kept, cutAt: 10_000) == kept)
    }

    @Test("a long code is cut after its limit, '...' marking the cut; a short one is whole")
    func cut() {
        #expect(
            TerminalText.escaped(String(repeating: "a", count: 1_000_000), cutAt: 120) == String(
                repeating: "a", count: 120) + "...")
        #expect(TerminalText.escaped("InvalidAccount", cutAt: 120) == "InvalidAccount")
        #expect(TerminalText.escaped("abc", cutAt: 3) == "abc")
        #expect(TerminalText.quoted("a\u{1b}b", cutAt: 2) == "'a\\x1b...'")
        #expect(TerminalText.quoted(bytes: Array("x\r\ny".utf8) + [0xFF], cutAt: 40) == "'x\\r\\ny\\xff'")
        #expect(
            TerminalText.quoted(bytes: Array(repeating: UInt8(ascii: "z"), count: 50), cutAt: 40).hasSuffix("z...'"))
    }
}
