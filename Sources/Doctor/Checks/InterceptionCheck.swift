// The doctor's interception check: a plain-HTTP URL whose answer is known (204, empty body: the
// generate_204 convention) comes back altered when a captive portal or transparent proxy is in the way.

import CurlTransport
import Foundation
import NameResolution
import Probe
import TerminalText

/// Asks connectivity check URLs once each over plain HTTP, following nothing, and reads what came.
struct InterceptionCheck: DoctorCheck {
    let id = DoctorCheckID.interception

    /// Public connectivity checks that answer 204 with an empty body from anywhere not intercepted:
    /// Android's, and Xiaomi's, which answers where Google's addresses are out of reach.
    static let publicCheckURLs = [
        "http://connectivitycheck.gstatic.com/generate_204", "http://connect.rom.miui.com/generate_204",
    ]

    func run(_ context: DoctorContext) async -> DoctorFinding {
        let urls = context.lab?.connectivityCheckURL.map { [$0] } ?? Self.publicCheckURLs
        let timeout = context.stepTimeout
        var trace = [
            DoctorTraceLine(
                .note,
                context.lab == nil
                    ? "public connectivity checks (Android's, Xiaomi's): each answers 204 with an empty body"
                    : "the lab's connectivity check: it answers 204 with an empty body")
        ]
        // The probe's own curl writer: a plain GET by system DNS, with the check's wait.
        let reproduce = urls.compactMap { url in
            (try? ProbeURL.parse(url)).map {
                ReproduceCommand.command(for: .init(scenario: .systemDNS, url: $0, ip: nil, timeout: timeout))
            }
        }
        // At once, and no redirect followed: a portal shows itself by where it sends the client.
        let records = await withTaskGroup(of: (Int, TransferRecord).self) { group in
            for (index, url) in urls.enumerated() {
                group.addTask {
                    (
                        index,
                        await TransferLoop.shared.perform(
                            TransferSpec(url: url, timeout: timeout, bodyLimit: .keepFirst(4096)))
                    )
                }
            }
            var records: [Int: TransferRecord] = [:]
            for await (index, record) in group { records[index] = record }
            return urls.indices.compactMap { index in records[index].map { (url: urls[index], record: $0) } }
        }
        for (url, record) in records { trace += Self.trace(url, record) }
        let reached = records.filter { $0.record.failure == nil }
        if reached.isEmpty {
            let why = records.map { "\($0.url) (\($0.record.failure?.description ?? "no answer"))" }
                .joined(separator: "; ")
            return DoctorFinding(
                check: id, status: .skipped,
                seen: "No connectivity check could be reached, so nothing could be compared: \(why).",
                trace: trace, reproduce: reproduce)
        }
        if let (url, record) = reached.first(where: { !($0.record.status == 204 && $0.record.responseBytes == 0) }) {
            return DoctorFinding(
                check: id, status: .fail, seen: Self.altered(url, record),
                advice:
                    "A captive portal or transparent proxy answers plain HTTP here: sign in to the network (open the page in a browser) or leave it; until then HTTP requests, HTTPDNS over HTTP among them, get its page.",
                trace: trace, reproduce: reproduce)
        }
        return DoctorFinding(
            check: id, status: .pass,
            seen:
                "\(reached.map(\.url).joined(separator: " and ")) answered 204 with an empty body, as it should: nothing on the path rewrites plain HTTP.",
            trace: trace, reproduce: reproduce)
    }

    /// What was sent and what came back, the body's start escaped.
    static func trace(_ url: String, _ record: TransferRecord) -> [DoctorTraceLine] {
        var lines = [DoctorTraceLine(.sent, "GET \(url)")]
        if let failure = record.failure {
            lines.append(DoctorTraceLine(.seen, failure.description))
            return lines
        }
        lines.append(DoctorTraceLine(.seen, record.statusLine ?? "HTTP \(record.status)"))
        for field in record.responseHeaders
        where ["location", "content-type", "server"].contains(field.name.lowercased()) {
            lines.append(DoctorTraceLine(.seen, "\(field.name): \(field.value)"))
        }
        if !record.body.isEmpty {
            lines.append(DoctorTraceLine(.seen, TerminalText.quoted(bytes: record.body, cutAt: 200)))
        }
        return lines
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
