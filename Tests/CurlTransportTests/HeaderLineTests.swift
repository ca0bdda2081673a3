// Header lines as libcurl hands them over (bytes) and as people write them (--header text),
// read into a name and a value the same way.
import CurlTransport
import Testing

@Suite("Header lines")
struct HeaderLineTests {
    @Test("a header line is read as name and value from bytes or text alike")
    func headerLineParsing() {
        #expect(
            Array("Name:  value ".utf8).withUnsafeBytes { HeaderField(bytes: $0) }
                == HeaderField(name: "Name", value: "value"))
        #expect(HeaderField(line: "no colon") == nil)
        #expect(HeaderField(line: "X-A:b:c") == HeaderField(name: "X-A", value: "b:c"))
        #expect(HeaderField(line: "Tabbed:\t v \t") == HeaderField(name: "Tabbed", value: "v"))
        #expect(HeaderField(line: "Spaced :no") == nil)
        #expect(HeaderField(line: ": empty name") == nil)
        #expect(HeaderField(line: "K:") == HeaderField(name: "K", value: ""))
    }
}
