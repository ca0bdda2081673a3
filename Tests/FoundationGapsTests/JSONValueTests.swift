// JSONValue against JSONSerialization, which it replaces in the binary: the same documents
// accepted and refused, the same reads of what services send, and byte-identical sealed objects.
import Foundation
import FoundationGaps
import Testing

@Suite struct JSONValueTests {
    /// Well-formed, malformed and hostile documents, each with a member `v` where there is one.
    static let documents: [[UInt8]] = {
        var texts = [
            #"{"v":1}"#, #"{"v":1.5}"#, #"{"v":-1.9}"#, #"{"v":1E400}"#, #"{"v":-0}"#, #"{"v":9223372036854775807}"#,
            #"{"v":9223372036854775808}"#, #"{"v":18446744073709551615}"#, #"{"v":-9223372036854775808}"#,
            #"{"v":1e30}"#, #"{"v":-1e30}"#, #"{"v":true}"#, #"{"v":false}"#, #"{"v":null}"#,
            #"{"v":[1,"a",null,true]}"#, #"{"v":{"a":1}}"#, #"{"v":"\ud800"}"#, #"{"v":"\uDE00"}"#,
            #"{"v":"\ud83d\ude00"}"#, #"{"v":"\u0000"}"#, #"{"v":01}"#, #"{"v":.5}"#, #"{"v":1.}"#, #"{"v":+1}"#,
            #"{"v":NaN}"#, "{\"v\":\"\u{7}\"}", #" {"v":1} "#, #"{"v":1} x"#, #"{"v":1}{}"#, #"[1]"#, #"5"#, #""a""#,
            "", #"{"v":"a"}"#, #"{"v":0.1}"#, #"{"v":1e-400}"#, #"{"v":12345678.9}"#, #"{"v":"é"}"#, #"{"v":1, }"#,
            #"{"v":[1,]}"#, #"{/*c*/"v":1}"#, #"{'v':1}"#, #"{v:1}"#, #"{"v": "x\/y"}"#, "\t\n{\"v\"\r:1}\n",
            #"{"":1}"#, #"{"v":-}"#, #"{"v":tru}"#, #"{"v":nul}"#, #"{"v":"\x"}"#, #"{"v":"\u12"}"#, #"[,]"#,
            #"[1,,2]"#, #"{,}"#, #"{"a":1,,"b":2}"#, #"{"v":1.7976931348623157e308}"#, #"{"v":4.9e-324}"#,
            #"{"code":"success","mode":"1","data":{"answers":[]}}"#, #"{"ips":["1.2.3.4",5,null],"ttl":"60"}"#,
        ]
        for depth in [100, 511, 512, 513, 5_000, 100_000] {
            texts.append("{\"v\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}")
            texts.append(String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth))
        }
        var documents = texts.map { Array($0.utf8) }
        let utf16 = Array(#"{"v":1}"#.utf16)
        documents += [
            [0x7B, 0x22, 0x76, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D], [0xC0, 0x80],
            [0xEF, 0xBB, 0xBF] + Array(#"{"v":1}"#.utf8),
            [0xFF, 0xFE] + utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] },
            utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }, utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] },
        ]
        return documents
    }()

    @Test func acceptsAndRefusesWhatJSONSerializationDid() {
        for document in Self.documents {
            let before = try? JSONSerialization.jsonObject(with: Data(document))
            let now = JSONValue(parsing: document)
            #expect((before == nil) == (now == nil), "\(String(decoding: document.prefix(60), as: UTF8.self))")
        }
    }

    /// A member read as the parsers read it before: `as? String`, `(as? NSNumber)?.intValue`,
    /// and `"\(value)"` for junk named in a message.
    @Test func readsAMemberAsJSONSerializationsObjectsWereRead() throws {
        for document in Self.documents {
            guard let before = (try? JSONSerialization.jsonObject(with: Data(document))) as? [String: Any],
                let old = before["v"]
            else { continue }
            let new = try #require(JSONValue(parsing: document)?["v"])
            let label = String(decoding: document.prefix(60), as: UTF8.self)
            #expect(new.string == old as? String, "\(label)")
            #expect(new.intValue == (old as? NSNumber)?.intValue, "\(label)")
            #expect(new.isNull == (old is NSNull), "\(label)")
            #expect((new.array == nil) == !(old is [Any]), "\(label)")
            #expect((new.object == nil) == !(old is [String: Any]), "\(label)")
            // An integral number written with a fraction or exponent (`1e-400`, `0.0`) is the known
            // difference pinned below.
            if !(old is [String: Any]), !"\(old)".hasSuffix(".0") {
                #expect(new.description == "\(old)", "\(label)")
            }
        }
    }

    /// The known differences, pinned so a change in them is seen: a repeated key (JSONDecoder
    /// keeps the first, JSONSerialization kept the last), an integral number written with a
    /// fraction or exponent (`1.0` reads as the integer 1; only the text of junk shows it), and an
    /// integer beyond 64 bits (read as a Double; JSONSerialization's NSDecimalNumber wrapped it).
    @Test func theDifferencesFromJSONSerializationAreTheDocumentedOnes() {
        #expect(JSONValue(parsing: Array(#"{"v":1,"v":2}"#.utf8))?["v"]?.intValue == 1)
        #expect(JSONValue(parsing: Array(#"{"v":[1.0,1e2,1e-400]}"#.utf8))?["v"]?.description == "[1, 100, 0]")
        #expect(JSONValue(parsing: Array(#"{"v":18446744073709551616}"#.utf8))?["v"]?.intValue == Int.min)
    }

    @Test func encodesAsJSONSerializationWithSortedKeysForEverySealedShape() throws {
        let alphabet = Array("aAbBkKqQzZ0129_-")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var members: [String: String] = ["dn": "a.example,b.example", "q": "4,6", "cip": "192.0.2.1"]
            for _ in 0..<4 {
                let key =
                    "sdns-"
                    + String(
                        (1...Int.random(in: 1...4, using: &generator)).map { _ in
                            alphabet.randomElement(using: &generator)!
                        })
                members[key] =
                    String(
                        (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                            Character(Unicode.Scalar(UInt8.random(in: 0...127, using: &generator)))
                        }) + "é/\u{2028}"
            }
            let before = try JSONSerialization.data(withJSONObject: members, options: [.sortedKeys])
            let now = JSONValue.object(members.mapValues { .string($0) }).encoded()
            #expect(Array(before) == now, "\(String(decoding: before, as: UTF8.self))")
        }
    }

    @Test func encodesNumbersNullsAndNestingAsJSONSerialization() throws {
        let object: [String: Any] = ["code": "success", "mode": 2, "n": NSNull(), "list": [1, "a", true] as [Any]]
        let value: JSONValue = ["code": "success", "mode": 2, "n": nil, "list": [1, "a", true]]
        let before = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        #expect(Array(before) == value.encoded())
        #expect(JSONValue(parsing: value.encoded()) == value)
    }

    /// Through an Encoder (the cache file's way) a value is written back as it was read: an
    /// integer stays an integer, a fraction a fraction, a number past Int64 exact.
    @Test func encodesThroughJSONEncoderAsItWasRead() throws {
        let text = #"{"a":[1,2.5,null,true,"x"],"b":{"c":18446744073709551615},"d":-7}"#
        let value = try #require(JSONValue(parsing: Array(text.utf8)))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try encoder.encode(value), as: UTF8.self) == text)
    }
}
