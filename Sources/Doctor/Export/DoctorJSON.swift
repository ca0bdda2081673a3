// The doctor's report as a JSON document: the one function `doctor --format json` and the
// console's `e` both write it with, so the two files a user compares are the same shape.

import FoundationEssentials
import Probe

extension DoctorReport {
    /// The report as JSON in `probe --format json`'s conventions (`ProbeExport.document`): dates
    /// as ISO 8601 with milliseconds, slashes not escaped, and a newline at the end.
    ///
    /// - Parameter pretty: indented with sorted keys, for reading; compact otherwise.
    /// - Returns: the document's bytes.
    public func json(pretty: Bool = true) -> Data {
        // A report is strings, numbers and dates: encoding it cannot fail.
        let encoded = ProbeExport.document(self, pretty: pretty) ?? Data("{}".utf8)
        return encoded + Data("\n".utf8)
    }
}
