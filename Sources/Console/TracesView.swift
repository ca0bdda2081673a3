// The traces view: every request, newest first, and the detail of one: a waterfall of its
// phases drawn to scale, headers, the certificate chain and the name checked, hops, curl's log.
import Foundation
import Probe

func drawTracesView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    let g = state.glyphs
    var y = rows.lowerBound
    let total = state.traces.count
    let listed = state.traceListCount
    buffer.draw(
        [
            Span(" \(listed) of \(total) requests kept", .dim),
            Span(
                g.separator + "newest first" + g.separator + "Enter opens one" + g.separator + "e exports the list",
                .dim),
        ], x: 0, y: y, width: buffer.width)
    y += 1
    let fixed = [8, 12, 18, 8]
    let flexible = max(24, buffer.width - 1 - fixed.reduce(0, +) - 7)
    let ipWidth = min(39, max(9, flexible * 3 / 10))
    let sniWidth = flexible * 3 / 10
    let urlWidth = flexible - ipWidth - sniWidth
    let widths = [fixed[0], fixed[1], urlWidth, ipWidth, sniWidth, fixed[2], fixed[3]]
    drawHeader(
        zip(["TIME", "SCENARIO", "URL", "IP", "SNI", "OUTCOME", "TOTAL"], widths).map { ($0, $1) }, y: y, into: &buffer)
    y += 1
    if listed == 0 {
        let text =
            total == 0 ? "No requests yet. Probe a host in the probe view (1)." : "No request matches the filter."
        buffer.put(" " + text, x: 0, y: y, style: .dim)
        return
    }
    let cursor = state.traceCursor
    let end = min(listed, cursor.offset + (rows.upperBound - y))
    for row in cursor.offset..<end {
        guard let record = state.traceAt(row: row) else { break }
        let attempt = record.attempt
        var outcome = attempt.outcome.rawValue
        if let status = attempt.status { outcome += " \(status)" }
        let cells: [(String, CellStyle)] = [
            (clockTime(record.time, state.timeZone), .dim),
            (attempt.scenario.rawValue, .plain),
            (g.clip(withoutScheme(attempt.url), widths[2]), .plain),
            (g.clip(attempt.ip?.text ?? "-", widths[3]), .plain),
            (g.clip(attempt.sni ?? "(none)", widths[4]), attempt.sni == nil ? .dim : .plain),
            (g.clip(outcome, widths[5]), outcomeStyle(attempt.outcome)),
            (
                (attempt.outcome == .skipped ? "-" : formatMilliseconds(attempt.timings.total)).leftPadded(widths[6]),
                .plain
            ),
        ]
        buffer.putRow(cells, widths: widths, y: y, selected: row == cursor.selected)
        y += 1
    }
}

func drawTraceDetail(_ state: ConsoleState, record: TraceRecord, rows: Range<Int>, into buffer: inout CellBuffer) {
    buffer.draw(detailLines(record, state: state, width: buffer.width), scrolledBy: state.detailScroll, rows: rows)
}

/// The phases of an exchange, in order, as spans of milliseconds from its start.
func phases(_ t: PhaseTimings) -> [(name: String, start: Double, end: Double)] {
    var result: [(String, Double, Double)] = []
    var cursor = 0.0
    func add(_ name: String, _ end: Double?) {
        guard let end, end >= cursor else { return }
        result.append((name, cursor, end))
        cursor = end
    }
    add("DNS", t.nameLookup)
    add("connect", t.connect)
    add("TLS", t.tlsDone)
    add("first byte", t.firstByte)
    add("transfer", t.total)
    return result
}

/// The detail of one trace as lines, for the scrollable detail view.
func detailLines(_ record: TraceRecord, state: ConsoleState, width: Int) -> [StyledLine] {
    let g = state.glyphs
    let attempt = record.attempt
    var lines: [StyledLine] = []
    func section(_ title: String) {
        lines.append([])
        lines.append([Span(" " + title, .fg(.cyan, bold: true))])
    }
    var head: StyledLine = [Span(" "), Span(attempt.scenario.rawValue, .bold), Span("  " + attempt.url)]
    if let ip = attempt.ip { head.append(Span(g.arrow + ip.text + " (\(attempt.ipSource?.rawValue ?? "?"))", .dim)) }
    lines.append(head)
    // Which HTTPDNS provider gave the addresses, and the wire profile its requests followed (`--sdk`).
    if let httpdns = state.runs.first(where: { $0.id == record.runID })?.resolution?.httpdns {
        lines.append([Span("  addresses from HTTPDNS \(httpdns.provider), ttl \(httpdns.ttl.shown)", .dim)])
    }
    var outcome: StyledLine = [Span(" "), Span(attempt.outcome.rawValue, outcomeStyle(attempt.outcome))]
    if let status = attempt.status { outcome.append(Span(" \(status)", .bold)) }
    if let version = attempt.httpVersion {
        outcome.append(Span(version.hasPrefix("HTTP") ? " " + version : " HTTP/" + version, .dim))
    }
    outcome.append(
        Span(
            g.separator + formatMilliseconds(attempt.timings.total) + g.separator
                + clockTime(record.time, state.timeZone), .dim))
    outcome.append(Span(g.separator + "SNI ", .dim))
    outcome.append(Span(attempt.sni ?? "(none sent)"))
    if let checked = attempt.checkedName {
        outcome.append(Span(g.separator + "name checked ", .dim))
        outcome.append(Span(checked))
    }
    lines.append(outcome)
    if let error = attempt.error {
        for text in wrap(error.sentence(.console), width: width - 3) { lines.append([Span("  " + text, .fg(.red))]) }
    }

    // Waterfall, to scale: one row per phase, the bar placed where the phase happened.
    section("Phases")
    let total = max(attempt.timings.total, 0.001)
    let labelWidth = 11
    let numbersWidth = 18
    let barWidth = max(10, width - labelWidth - numbersWidth - 4)
    for phase in phases(attempt.timings) {
        let start = Int((phase.start / total * Double(barWidth)).rounded(.down))
        var length = Int(((phase.end - phase.start) / total * Double(barWidth)).rounded())
        if phase.end > phase.start { length = max(1, length) }
        length = min(length, barWidth - min(start, barWidth - 1))
        var bar = String.UnicodeScalarView()
        for column in 0..<barWidth {
            bar.append(column >= start && column < start + length ? g.barFull : " ")
        }
        let numbers = String(format: "%7.1f to %7.1f", phase.start, phase.end)
        lines.append([
            Span(" " + phase.name.padded(labelWidth)), Span(numbers.padded(numbersWidth), .dim), Span(" "),
            Span(String(bar), phaseStyle(phase.name)),
        ])
    }
    lines.append([
        Span(" " + "total".padded(labelWidth), .bold), Span(String(format: "%18.1f ms", attempt.timings.total), .bold),
    ])

    if !record.detailed {
        section("Details dropped")
        lines.append([
            Span(
                "  Only the newest \(state.maxTraceDetails) traces keep headers, certificates and curl's log (--max-trace-details).",
                .dim)
        ])
    }
    for (index, hop) in attempt.hops.enumerated() {
        let label = attempt.hops.count > 1 ? "Hop \(index + 1) of \(attempt.hops.count): " : "Request: "
        section(label + hop.method + " " + hop.url)
        var facts = "  original \(hop.originalURL)" + g.separator + "resolver \(hop.resolver)"
        if let ip = hop.remoteIP { facts += g.separator + "\(ip):\(hop.remotePort.map(String.init) ?? "?")" }
        lines.append([Span(facts, .dim)])
        var result: StyledLine = [Span("  "), Span(hop.outcome.rawValue, outcomeStyle(hop.outcome))]
        if let status = hop.status { result.append(Span(" \(status)")) }
        result.append(
            Span(g.separator + "\(hop.responseBytes) bytes" + g.separator + formatMilliseconds(hop.timings.total), .dim)
        )
        lines.append(result)
        if let error = hop.error { lines.append([Span("  " + error.sentence(.console), .fg(.red))]) }
        lines.append([Span("  Request headers", .bold)])
        for header in hop.requestHeaders { lines.append(headerLine(header)) }
        if hop.requestHeaders.isEmpty { lines.append([Span("    (none recorded)", .dim)]) }
        lines.append([Span("  Response headers", .bold)])
        for header in hop.responseHeaders { lines.append(headerLine(header)) }
        if hop.responseHeaders.isEmpty { lines.append([Span("    (no response)", .dim)]) }
    }

    if let certificate = attempt.certificate {
        section("Certificate chain")
        let verified = certificate.verifyResult == 0
        lines.append([
            Span("  checked against "), Span(attempt.checkedName ?? "(nothing)", .bold), Span(": "),
            Span(certificate.verifyMessage, verified ? .fg(.green, bold: true) : .fg(.red, bold: true)),
        ])
        for (index, cert) in certificate.chain.enumerated() {
            lines.append([Span("  \(index) ", .dim), Span(cert.subject, .bold)])
            let names = cert.subjectAlternativeNames.joined(separator: ", ")
            lines.append([Span("    names: ", .dim), Span(names.isEmpty ? "(none)" : names)])
            lines.append([Span("    issuer: ", .dim), Span(cert.issuer)])
            lines.append([
                Span("    valid: ", .dim),
                Span(
                    dayString(cert.notBefore) + " to " + dayString(cert.notAfter),
                    cert.notAfter < state.now ? .fg(.red) : .plain),
            ])
        }
    } else if attempt.scenario != .directHTTP {
        section("Certificate chain")
        lines.append([Span("  (none: the handshake did not get that far, or plain HTTP)", .dim)])
    }

    let log = attempt.hops.flatMap(\.log)
    section("curl log (\(log.count) lines)")
    for entry in log {
        lines.append([
            // The widest kind ("header-out") is 10 columns; one more keeps it off the text.
            Span(String(format: "  %8.1f ", entry.atMs), .dim), Span(entry.kind.rawValue.padded(11), .dim),
            Span(entry.text),
        ])
    }
    return lines
}

/// A URL without `https://`: the scheme shows in the scenario, the room goes to the host.
func withoutScheme(_ url: String) -> String {
    guard let range = url.range(of: "://") else { return url }
    return String(url[range.upperBound...])
}

private func headerLine(_ header: HeaderField) -> StyledLine {
    [Span("    " + header.name + ": ", .fg(.cyan)), Span(header.value)]
}

private func phaseStyle(_ name: String) -> CellStyle {
    switch name {
    case "DNS": .fg(.magenta)
    case "connect": .fg(.yellow)
    case "TLS": .fg(.blue)
    case "first byte": .fg(.green)
    default: .fg(.cyan)
    }
}

private func dayString(_ date: Date) -> String {
    let days = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
    // Civil date from days since 1970 (Howard Hinnant's algorithm), avoiding a formatter.
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
    return String(format: "%04d-%02d-%02d", y, m, d)
}
