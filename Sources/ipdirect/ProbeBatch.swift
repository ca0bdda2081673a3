// A `probe` batch from start to end: reports streamed to stdout and files as URLs finish, the
// progress line, and Ctrl-C (once: finish what is under way; twice: stop now, files complete).
import ArgumentParser
import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe
import Signals
import TerminalText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs one batch of `ipdirect probe` and says how it ended.
enum ProbeBatch {
    /// Where results go.
    struct Outputs {
        var format: ProbeFormat
        /// `-o FILE`: the output goes there instead of standard output.
        var file: String?
        var har: String?
        var jsonl: String?
        /// Add to `--jsonl` rather than start it afresh (it is the `--resume` file).
        var appendJSONL: Bool
        /// Rank each host's addresses (`--rank`) before the report is written.
        var rank = false
        /// `-v`: every request's curl log on stderr as its URL finishes.
        var verbose = false
        /// `--format json` indented; otherwise one compact report a line.
        var pretty = false
        /// The table's width and colour.
        var tableStyle = TableStyle.plain
        /// The table's first line: which provider answered (`ProbeTable.heading`).
        var heading: String?
    }

    /// How a batch ended.
    struct Outcome {
        var done = 0
        var ok = 0
        var failed = 0
        /// The signal that stopped the batch early.
        var interruptedBy: Int32?
        var writeFailed = false
        /// Every URL started was written: a late stop has nothing left to cut short.
        var complete = false
    }

    /// Probes `urls`, writing each result as soon as it is known.
    ///
    /// - Throws: `CommandFailure` when an output file cannot be created.
    static func run(
        _ urls: [String], engine: ProbeEngine, outputs: Outputs, order: ProbeOrder, progress showProgress: Bool
    ) async throws -> Outcome {
        let stdoutFormat: ReportWriter.Format =
            switch outputs.format {
            case .table: .table
            case .json: .jsonArray
            case .jsonl: .jsonLines
            }
        // The engine's reports are redacted already (unless --no-redact): a writer's own pass over
        // every header and log line again was a second full copy of each report, for nothing.
        var writers: [ReportWriter] = []
        do {
            writers.append(
                try outputs.file.map { try ReportWriter(stdoutFormat, path: $0, redact: false, pretty: outputs.pretty) }
                    ?? ReportWriter(
                        stdoutFormat, descriptor: STDOUT_FILENO, redact: false, pretty: outputs.pretty,
                        tableStyle: outputs.tableStyle))
            if let jsonl = outputs.jsonl {
                writers.append(
                    try ReportWriter(.jsonLines, path: jsonl, redact: false, appending: outputs.appendJSONL))
            }
            if let har = outputs.har { writers.append(try ReportWriter(.har, path: har, redact: false)) }
        } catch {
            throw CommandFailure("\(error)")
        }
        if let heading = outputs.heading { writers[0].heading(heading) }
        let stdoutIsTerminal = outputs.file == nil && isatty(STDOUT_FILENO) == 1
        let progress = ProgressLine(total: urls.count, enabled: showProgress)
        let outcome = Locked(Outcome())
        let stop = BatchStop()
        let finishedWriters = writers
        let stdoutWriter = writers[0]

        // Ctrl-C once: no more URLs start, those under way get the request timeout to finish;
        // twice, or when that time is up: complete the files and leave now.
        let grace = engine.options.timeout + .seconds(1)
        let stopNow: @Sendable (Int32) -> Void = { number in
            guard !outcome.withLock({ $0.complete }) else { return }
            progress.stop()
            for writer in finishedWriters { writer.finish() }
            ErrorVoice.say(summary(outcome.withLock { $0 }, total: urls.count, jsonl: outputs.jsonl, now: true))
            exit(ExitStatus.stopped(by: number))
        }
        let signals = try? SignalPipe(watching: [SIGINT, SIGTERM])
        signals?.onSignal { number in
            let first = outcome.withLock { state -> Bool in
                defer { state.interruptedBy = state.interruptedBy ?? number }
                return state.interruptedBy == nil
            }
            guard first else { return stopNow(outcome.withLock { $0.interruptedBy ?? number }) }
            stop.pull()
            progress.clearedWhile {
                ErrorVoice.say(
                    "stopping: no more URLs start; those under way get \(Int(grace.inSeconds.rounded(.up))) s to finish. "
                        + "Interrupt again to stop now.")
            }
            Task.detached {
                try? await Task.sleep(for: grace)
                stopNow(number)
            }
        }
        defer { signals?.stop() }

        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(200))
                progress.tick()
            }
        }
        let inFlight = max(1, engine.options.concurrency * 3)
        await engine.probeAll(
            urls, order: order == .input ? .input(window: inFlight * 4) : .completion, inFlight: inFlight, stop: stop,
            onWait: { index, url in
                progress.clearedWhile {
                    ErrorVoice.say("--order input: waiting for URL \(index + 1) (\(url)) before starting more")
                }
            },
            onReport: { item in
                guard var report = item.report else { return }
                report.index = item.index
                if outputs.rank, let port = (try? ProbeURL.parse(report.url))?.port {
                    // The same ranking as `resolve --rank`, with which scenario used which address.
                    report.ranking = await IPRanking.rank(report.resolution, port: port, attempts: report.attempts)
                }
                let works = !report.verdict.works.isEmpty
                if outputs.verbose { progress.clearedWhile { trace(report) } }
                if stdoutIsTerminal {
                    progress.clearedWhile { stdoutWriter.record(report) }
                } else {
                    stdoutWriter.record(report)
                }
                for writer in finishedWriters.dropFirst() { writer.record(report) }
                outcome.withLock { state in
                    state.done += 1
                    if works { state.ok += 1 } else { state.failed += 1 }
                }
                progress.finished(ok: works)
            })
        outcome.withLock { $0.complete = true }
        ticker.cancel()
        progress.stop()
        for writer in writers { writer.finish() }
        var result = outcome.withLock { $0 }
        // Standard output's failures (a closed pipe, as with head) are not worth a sentence.
        let paths = [outputs.file] + [outputs.jsonl, outputs.har].filter { $0 != nil }
        for (writer, path) in zip(writers, paths) {
            if let path, let failure = writer.failure {
                ErrorVoice.say("cannot write \(path): \(failure)")
                result.writeFailed = true
            }
        }
        if result.interruptedBy != nil {
            ErrorVoice.say(summary(result, total: urls.count, jsonl: outputs.jsonl, now: false))
        }
        return result
    }

    /// What an interrupted batch did, and how to go on.
    private static func summary(_ outcome: Outcome, total: Int, jsonl: String?, now: Bool) -> String {
        var line =
            "interrupted: \(outcome.done) of \(total) URLs done (\(outcome.ok) ok, \(outcome.failed) failed), "
            + "\(total - outcome.done) not written"
        if now { line += " (stopped before the URLs under way finished)" }
        if let jsonl { line += "; to go on: the same command with --resume \(jsonl)" }
        return line
    }

    /// `-v`: curl's log of every request the report made, on stderr, as curl -v prints it
    /// (`*` for its notes, `>` sent, `<` received), each line after the scenario and address.
    private static func trace(_ report: URLReport) {
        var text = ""
        for attempt in report.attempts {
            for hop in attempt.hops {
                let label = "[\(attempt.scenario.rawValue) \(hop.remoteIP ?? attempt.ip ?? "-")]"
                for line in hop.log {
                    let mark =
                        switch line.kind {
                        case .headerOut: ">"
                        case .headerIn: "<"
                        case .info, .ssl: "*"
                        }
                    text += "\(label) \(mark) \(TerminalText.escaped(line.text))\n"
                }
            }
        }
        StandardStream.error.write(text)
    }
}
