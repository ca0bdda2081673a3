// The doctor's interception check: a plain-HTTP URL whose answer is known (204, empty body: the
// generate_204 convention) comes back altered when a captive portal or transparent proxy is in the way.

import CurlTransport
import FoundationEssentials
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
        let urls = context.connectivityURLs
        let timeout = context.stepTimeout
        var trace = [
            DoctorTraceLine(
                .note,
                context.lab != nil
                    ? "the lab's connectivity check: it answers 204 with an empty body"
                    : urls == Self.publicCheckURLs
                        ? "public connectivity checks (Android's, Xiaomi's): each answers 204 with an empty body"
                        : "connectivity checks as configured: each should answer 204 with an empty body")
        ]
        // The probe's own curl writer: a plain GET by system DNS, with the check's wait.
        let reproduce = urls.compactMap { url in
            (try? ProbeURL.parse(url)).map {
                ReproduceCommand.command(for: .init(scenario: .systemDNS, url: $0, ip: nil, timeout: timeout))
            }
        }
        // Each URL's name through the system resolver first, bounded: libcurl would wait for
        // getaddrinfo (glibc: 5 s a try, twice) past the check's own bound.
        let pins = await Self.resolve(urls, context: context)
        for pin in pins { trace.append(pin.trace) }
        // At once, and no redirect followed: a portal shows itself by where it sends the client.
        let records = await withTaskGroup(of: (Int, TransferRecord?).self) { group in
            for (index, url) in urls.enumerated() {
                let pin = pins[index]
                group.addTask {
                    guard pin.failure == nil else { return (index, nil) }
                    return (
                        index,
                        await TransferLoop.shared.perform(
                            TransferSpec(url: url, timeout: timeout, resolve: pin.resolve, bodyLimit: .keepFirst(4096)))
                    )
                }
            }
            var records: [Int: TransferRecord] = [:]
            for await (index, record) in group { records[index] = record }
            return urls.indices.compactMap { index in records[index].map { (url: urls[index], record: $0) } }
        }
        let unresolved = pins.compactMap(\.failure)
        if records.isEmpty, !unresolved.isEmpty {
            // A DNS fault, not interception: the finding says so and leaves the cause to DNS paths.
            return DoctorFinding(
                check: id, status: .skipped,
                seen: "No connectivity check could be asked: \(unresolved.joined(separator: "; ")).",
                advice: "The DNS paths check says why the system resolver does not answer; this check needs it first.",
                trace: trace, reproduce: reproduce)
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

    /// One URL's name through the system resolver: the pin for libcurl, or why there is none.
    struct Pin: Sendable {
        var resolve: [String] = []
        var failure: String?
        var trace: DoctorTraceLine
    }

    /// Resolves each URL's host name at once through the system resolver (the lab's DNS server
    /// with the lab), each bounded by the step's wait; an address literal needs none.
    static func resolve(_ urls: [String], context: DoctorContext) async -> [Pin] {
        let limit = context.stepTimeout
        return await withTaskGroup(of: (Int, Pin).self) { group in
            for (index, url) in urls.enumerated() {
                group.addTask {
                    guard let parsed = try? ProbeURL.parse(url) else {
                        return (index, Pin(trace: DoctorTraceLine(.note, "\(url) is not a URL ipdirect reads")))
                    }
                    let host = parsed.host
                    if parsed.literalHost != nil {
                        return (index, Pin(trace: DoctorTraceLine(.note, "\(host) is an address: nothing to resolve")))
                    }
                    let answer = await context.systemResolve(host, families: [.v4, .v6])
                    guard let address = (answer.ipv4 + answer.ipv6).first else {
                        let why: String
                        if case .systemDNS(.timedOut)? = answer.error {
                            why =
                                "the system resolver did not answer for \(host) within \(ResolutionError.format(limit.inSeconds)) s"
                        } else {
                            why = "\(host) did not resolve (\(answer.error?.sentence ?? "no address"))"
                        }
                        return (index, Pin(failure: why, trace: DoctorTraceLine(.seen, why)))
                    }
                    let port = parsed.port
                    return (
                        index,
                        Pin(
                            resolve: ["\(host):\(port):\(address.text)"],
                            trace: DoctorTraceLine(.seen, "\(host) resolves to \(address.text)"))
                    )
                }
            }
            var pins: [Int: Pin] = [:]
            for await (index, pin) in group { pins[index] = pin }
            return urls.indices.map { pins[$0] ?? Pin(trace: DoctorTraceLine(.note, "not resolved")) }
        }
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
