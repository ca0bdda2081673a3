// HTTPDate against the DateFormatter it replaces in the binary: the same text written for every
// time, and the same times read from what a service's `Date` header may hold.
import Foundation
import FoundationGaps
import Testing

@Suite struct HTTPDateTests {
    /// The formatters ipdirect used: the provider's reader of `Date`, the lab's writer, a day.
    static let reader = formatter("EEE, dd MMM yyyy HH:mm:ss zzz")
    static let writer = formatter("EEE, dd MMM yyyy HH:mm:ss 'GMT'")
    static let dayWriter = formatter("yyyy-MM-dd")

    static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }

    @Test func writesWhatDateFormatterWroteForWholeSeconds() {
        var generator = SystemRandomNumberGenerator()
        // From the Gregorian calendar's start (DateFormatter is Julian before it) to year 9999.
        let seconds =
            [0, -1, 784_111_777, 951_782_400, 1_700_000_000, 253_402_300_799, -12_219_292_800]
            + (0..<20_000).map { _ in Int.random(in: -12_219_292_800...253_402_300_799, using: &generator) }
        for second in seconds {
            let date = Date(timeIntervalSince1970: TimeInterval(second))
            #expect(HTTPDate.string(from: date) == Self.writer.string(from: date), "\(second)")
            #expect(HTTPDate.date(from: HTTPDate.string(from: date)) == date, "\(second)")
            let day = HTTPDate.day(of: date)
            let written = String(format: "%04d-%02d-%02d", day.year, day.month, day.day)
            #expect(written == Self.dayWriter.string(from: date), "\(second)")
        }
    }

    @Test func readsWhatDateFormatterRead() {
        let texts = [
            "Sun, 06 Nov 1994 08:49:37 GMT", "Mon, 06 Nov 1994 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 nov 1994 08:49:37 GMT", "sun, 06 NOV 1994 08:49:37 gmt",
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 +0000", "Sun, 06 Nov 1994 08:49:37 -0130",
            "Sun, 06 Nov 1994 08:49:37 GMT+8", "Sun, 06 Nov 1994 08:49:37 GMT+08:00", "Sun, 06 Nov 1994 08:49:37 Z",
            "Sun, 06 Nov 1994 08:49:37", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            "Sun, 06 Nov 1994 08:49:37 GMT junk", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 31 Feb 1994 08:49:37 GMT",
            "Tue, 29 Feb 2000 00:00:00 GMT", "Tue, 29 Feb 1900 00:00:00 GMT", "Sun, 06 Nov 1994 25:00:00 GMT",
            " Sun, 06 Nov 1994 08:49:37 GMT", "Sun,  06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:60 GMT",
            "Sun,06 Nov 1994 08:49:37 GMT", "Sun, 06 November 1994 08:49:37 GMT", "Sunday, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "", "\u{1B}[2J",
        ]
        for text in texts {
            #expect(HTTPDate.date(from: text) == Self.reader.date(from: text), "\(text.debugDescription)")
        }
    }

    /// DateFormatter read zone names through ICU (`PST`); a service's `Date` is GMT, so they are refused.
    @Test func refusesZoneNamesOtherThanGMT() {
        #expect(Self.reader.date(from: "Sun, 06 Nov 1994 08:49:37 PST") != nil)
        #expect(HTTPDate.date(from: "Sun, 06 Nov 1994 08:49:37 PST") == nil)
    }
}
