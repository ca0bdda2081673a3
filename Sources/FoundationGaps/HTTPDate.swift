// The HTTP `Date` header's time (RFC 9110 IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`) written
// and read by hand: DateFormatter, which did it before, lives in the full Foundation (ICU).
import FoundationEssentials

/// IMF-fixdate text for a time and back, in the proleptic Gregorian calendar in GMT.
public enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let fullWeekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
    private static let fullMonths = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
        "november", "december",
    ]

    /// `date` as `Sun, 06 Nov 1994 08:49:37 GMT` (its fraction of a second dropped), the text a
    /// DateFormatter with format `EEE, dd MMM yyyy HH:mm:ss 'GMT'` in en_US_POSIX and GMT gave.
    public static func string(from date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds.floorDivided(by: 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = weekdays[(days + 4).floorModulo(7)]  // 1970-01-01 was a Thursday
        return "\(weekday), \(twoDigits(day)) \(months[month - 1]) \(fourDigits(year)) "
            + "\(twoDigits(secondOfDay / 3_600)):\(twoDigits(secondOfDay / 60 % 60)):\(twoDigits(secondOfDay % 60)) GMT"
    }

    /// The time of an IMF-fixdate; nil for text that is not one. As DateFormatter with format
    /// `EEE, dd MMM yyyy HH:mm:ss zzz` read it: names of days and months in any case and
    /// spelled out or not, the day of the week not checked against the date, one-digit days and
    /// hours, blanks at the start and runs of blanks; the zone `GMT`, `UTC`, `Z`, `+hhmm` or
    /// `GMT+h[:mm]`. Unlike it, other zone names (`PST`) are refused: a service's `Date` is in GMT.
    public static func date(from text: some StringProtocol) -> Date? {
        var scanner = Scanner(Substring(text).drop { $0 == " " || $0 == "\t" })
        guard let weekday = scanner.word(),
            weekdays.contains(where: { $0.lowercased() == weekday })
                || fullWeekdays.contains(weekday),
            scanner.take(","), scanner.blanks(), let day = scanner.number(digits: 1...2), scanner.blanks(),
            let monthName = scanner.word(),
            let month = (months.firstIndex { $0.lowercased() == monthName } ?? fullMonths.firstIndex(of: monthName)),
            scanner.blanks(), let year = scanner.number(digits: 1...6), scanner.blanks(),
            let hour = scanner.number(digits: 1...2), scanner.take(":"), let minute = scanner.number(digits: 2...2),
            scanner.take(":"), let second = scanner.number(digits: 2...2), scanner.blanks(),
            let offset = scanner.zoneOffset(), scanner.isAtEnd
        else { return nil }
        guard day >= 1, day <= daysIn(month: month + 1, year: year), hour < 24, minute < 60, second < 60 else {
            return nil
        }
        let days = Self.days(year: year, month: month + 1, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds))
    }

    /// The Gregorian date of `date` in GMT (proleptic: the calendar as it is, before 1582 too),
    /// for text that shows a day without a formatter.
    public static func day(of date: Date) -> (year: Int, month: Int, day: Int) {
        civil(fromDays: Int(date.timeIntervalSince1970.rounded(.down)).floorDivided(by: 86_400))
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private static func fourDigits(_ value: Int) -> String {
        String(repeating: "0", count: max(0, 4 - String(value).count)) + String(value)
    }

    private static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = y.floorDivided(by: 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The Gregorian date of a day counted from 1970-01-01 (Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Reads an IMF-fixdate's parts left to right.
    private struct Scanner {
        var rest: Substring

        init(_ text: Substring) { rest = text }

        var isAtEnd: Bool { rest.isEmpty }

        mutating func take(_ literal: String) -> Bool {
            guard rest.hasPrefix(literal) else { return false }
            rest = rest.dropFirst(literal.count)
            return true
        }

        /// Skips blanks; false when there were none.
        mutating func blanks() -> Bool {
            let count = rest.prefix { $0 == " " || $0 == "\t" }.count
            rest = rest.dropFirst(count)
            return count > 0
        }

        /// ASCII letters, lower-cased.
        mutating func word() -> String? {
            let letters = rest.prefix { $0.isASCII && $0.isLetter }
            guard !letters.isEmpty else { return nil }
            rest = rest.dropFirst(letters.count)
            return letters.lowercased()
        }

        mutating func number(digits: ClosedRange<Int>) -> Int? {
            let text = rest.prefix { $0.isASCII && $0.isNumber }
            guard digits.contains(text.count), let value = Int(text) else { return nil }
            rest = rest.dropFirst(text.count)
            return value
        }

        /// Seconds east of GMT: `GMT`, `UTC`, `Z` (0), `+hhmm`, `GMT+h`, `GMT+hh:mm`.
        mutating func zoneOffset() -> Int? {
            if take("Z") || take("z") { return 0 }
            if let name = word() {
                guard name == "gmt" || name == "utc" else { return nil }
                if rest.isEmpty { return 0 }
            }
            let sign: Int
            if take("+") {
                sign = 1
            } else if take("-") {
                sign = -1
            } else {
                return nil
            }
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            var hours: Int
            var minutes = 0
            switch digits.count {
            case 1, 2:
                guard let value = number(digits: 1...2) else { return nil }
                hours = value
                if take(":") {
                    guard let value = number(digits: 2...2) else { return nil }
                    minutes = value
                }
            case 4:
                guard let value = number(digits: 4...4) else { return nil }
                hours = value / 100
                minutes = value % 100
            default: return nil
            }
            guard hours < 24, minutes < 60 else { return nil }
            hours = hours * 3_600 + minutes * 60
            return sign * hours
        }
    }
}

extension Int {
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    fileprivate func floorModulo(_ divisor: Int) -> Int { self - floorDivided(by: divisor) * divisor }
}
