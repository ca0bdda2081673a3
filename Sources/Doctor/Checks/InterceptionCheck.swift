// The doctor's interception check: a plain-HTTP URL whose answer is known (204, empty body: the
// generate_204 convention) comes back altered when a captive portal or transparent proxy is in the way.

import CurlTransport
import Foundation
import NameResolution
import Probe
import TerminalText

/// Asks the connectivity check URL once over plain HTTP, following nothing, and reads what came.
struct InterceptionCheck: DoctorCheck {
    let id = DoctorCheckID.interception

    /// The public connectivity check Android uses: 204 with an empty body from anywhere not intercepted.
    static let publicCheckURL = "http://connectivitycheck.gstatic.com/generate_204"

    func run(_ context: DoctorContext) async -> DoctorFinding {
        let url = context.lab?.connectivityCheckURL ?? Self.publicCheckURL
        let timeout = context.stepTimeout
        var trace: [DoctorTraceLine] = [
            DoctorTraceLine(
                .note,
                context.lab == nil
                    ? "the public connectivity check (Android's): it answers 204 with an empty body"
                    : "the lab's connectivity check: it answers 204 with an empty body"),
            DoctorTraceLine(.sent, "GET \(url)"),
        ]
        let reproduce = [
            [
                "curl", "-sS", "-i", "--max-time", String(max(1, Int(timeout.inSeconds.rounded(.up)))),
                ReproduceCommand.quoted(url),
            ]
            .joined(separator: " ")
        ]
        // No redirect followed: a portal shows itself by where it sends the client.
        let record = await TransferLoop.shared.perform(
            TransferSpec(url: url, timeout: timeout, bodyLimit: .keepFirst(4096)))
        if let failure = record.failure {
            trace.append(DoctorTraceLine(.seen, failure.description))
            return DoctorFinding(
                check: id, status: .skipped,
                seen: "The connectivity check \(url) could not be reached (\(failure)), so nothing could be compared.",
                trace: trace, reproduce: reproduce)
        }
        trace.append(DoctorTraceLine(.seen, record.statusLine ?? "HTTP \(record.status)"))
        for field in record.responseHeaders
        where ["location", "content-type", "server"].contains(field.name.lowercased()) {
            trace.append(DoctorTraceLine(.seen, "\(field.name): \(field.value)"))
        }
        if !record.body.isEmpty {
            trace.append(DoctorTraceLine(.seen, TerminalText.quoted(bytes: record.body, cutAt: 200)))
        }
        if record.status == 204 && record.responseBytes == 0 {
            return DoctorFinding(
                check: id, status: .pass,
                seen: "\(url) answered 204 with an empty body, as it should: nothing on the path rewrites plain HTTP.",
                trace: trace, reproduce: reproduce)
        }
        return DoctorFinding(
            check: id, status: .fail, seen: Self.altered(url, record),
            advice:
                "A captive portal or transparent proxy answers plain HTTP here: sign in to the network (open the page in a browser) or leave it; until then HTTP requests, HTTPDNS over HTTP among them, get its page.",
            trace: trace, reproduce: reproduce)
    }

    /// What came back in place of 204 and nothing, in one sentence: the status, where a redirect
    /// leads, and the body's first bytes, all escaped (it is a stranger's text).
    static func altered(_ url: String, _ record: TransferRecord) -> String {
        var parts = ["\(url) answered \(record.status) instead of 204"]
        if let location = record.header("location") {
            parts.append("redirecting to \(TerminalText.quoted(location, cutAt: 120))")
        }
        if record.responseBytes > 0 {
            parts.append(
                "with \(record.responseBytes) bytes starting \(TerminalText.quoted(bytes: record.body, cutAt: 60))")
        }
        return parts.joined(separator: ", ") + ": the answer was altered on the way."
    }
}
