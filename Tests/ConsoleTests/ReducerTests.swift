// What a person notices when pressing keys: views switch, history recalls, the whole cache is
// flushed only after a yes, traces are kept up to the limit, exports are named by the clock.
import Console
import Foundation
import LabFaults
import NameResolution
import Probe
import Testing

@Suite("Console keys and engine events")
struct ReducerTests {
    private func state() -> ConsoleState { ConsoleFixtures.populatedState(size: TerminalSize(width: 80, height: 24)) }

    @Test("number keys and Tab switch views; the console starts with keys obeyed, p starts typing")
    func switchingViews() {
        var s = ConsoleFixtures.emptyState()
        #expect(s.mode == .command)
        #expect(reduce(into: &s, action: .key(.character("2"))) == [.loadCache])
        #expect(s.view == .cache)
        _ = reduce(into: &s, action: .key(.tab))
        #expect(s.view == .traces)
        _ = reduce(into: &s, action: .key(.backTab))
        #expect(s.view == .cache)
        _ = reduce(into: &s, action: .key(.character("?")))
        #expect(s.view == .help)
        _ = reduce(into: &s, action: .key(.character("p")))
        #expect(s.view == .probe && s.mode == .probeInput)
    }

    @Test("Enter probes what was typed; Up and Down walk the history")
    func historyAndProbe() {
        var s = ConsoleFixtures.emptyState()
        ConsoleFixtures.send(&s, keys: "pa.lab.test")
        #expect(reduce(into: &s, action: .key(.enter)) == [.probe(runID: 1, target: "a.lab.test")])
        ConsoleFixtures.send(&s, keys: ":b.lab.test")
        #expect(reduce(into: &s, action: .key(.enter)) == [.probe(runID: 2, target: "b.lab.test")])
        #expect(s.inFlight == 2)
        ConsoleFixtures.send(&s, keys: "p")
        _ = reduce(into: &s, action: .key(.up))
        #expect(s.input == "b.lab.test")
        _ = reduce(into: &s, action: .key(.up))
        #expect(s.input == "a.lab.test")
        _ = reduce(into: &s, action: .key(.down))
        _ = reduce(into: &s, action: .key(.down))
        #expect(s.input == "")
        _ = reduce(into: &s, action: .key(.escape))
        // `r` probes the selected (newest) run again.
        #expect(reduce(into: &s, action: .key(.character("r"))) == [.probe(runID: 3, target: "b.lab.test")])
    }

    @Test("D asks before flushing everything; d flushes the selected name")
    func flushing() {
        var s = state()
        _ = reduce(into: &s, action: .key(.character("2")))
        #expect(reduce(into: &s, action: .key(.character("D"))).isEmpty)
        #expect(s.mode == .confirmFlushAll)
        #expect(reduce(into: &s, action: .key(.character("n"))).isEmpty)
        #expect(s.message == "Nothing flushed")
        _ = reduce(into: &s, action: .key(.character("D")))
        #expect(reduce(into: &s, action: .key(.character("y"))) == [.flush(nil), .loadCache])
        _ = reduce(into: &s, action: .key(.character("j")))
        let selected = s.selectedCacheEntry?.host
        #expect(reduce(into: &s, action: .key(.character("d"))) == [.flush(selected), .loadCache])
        #expect(reduce(into: &s, action: .key(.character("r"))) == [.refresh(selected!), .loadCache])
    }

    @Test("s cycles the sort column; f and x change the resolver's settings")
    func sortingAndToggles() {
        var s = state()
        _ = reduce(into: &s, action: .key(.character("2")))
        #expect(s.selectedCacheEntry?.host == "dual.lab.test")
        _ = reduce(into: &s, action: .key(.character("s")))  // family
        _ = reduce(into: &s, action: .key(.character("s")))  // ips
        _ = reduce(into: &s, action: .key(.character("s")))  // ttl: the soonest to expire first
        #expect(s.cacheView.sort == .ttl)
        #expect(s.selectedCacheEntry?.host == "expired.lab.test")
        #expect(reduce(into: &s, action: .key(.character("f"))) == [.setFamily(.v4)])
        #expect(reduce(into: &s, action: .key(.character("x"))) == [.setReuseExpired(true)])
        #expect(render(s).text.contains("expired-IP reuse on"))
    }

    @Test("the status bar names the service IP that answered under alicloud service discovery")
    func serviceIPInStatusBar() {
        var s = ConsoleFixtures.emptyState(size: TerminalSize(width: 120, height: 24))
        s.engine.endpoint = "service discovery (region cn)"
        ConsoleFixtures.send(&s, keys: "psni-a.lab.test")
        _ = reduce(into: &s, action: .key(.enter))
        var resolution = ConsoleFixtures.resolution
        resolution.httpdns.server = "127.0.0.2"
        _ = reduce(into: &s, action: .probeEvent(runID: 1, .resolved(resolution)))
        #expect(render(s, size: TerminalSize(width: 120, height: 24)).text.contains("answered by 127.0.0.2"))
    }

    @Test("the TTL counts down as the clock ticks")
    func countdown() {
        var s = state()
        _ = reduce(into: &s, action: .key(.character("2")))
        #expect(render(s).text.contains("57s"))
        _ = reduce(into: &s, action: .tick(ConsoleFixtures.now.addingTimeInterval(2)))
        let text = render(s).text
        #expect(text.contains("55s") && !text.contains("57s"))
    }

    @Test("traces are kept up to the limit, newest first, and the filter narrows them")
    func retentionAndFilter() {
        var s = ConsoleState(
            size: TerminalSize(width: 80, height: 24), now: ConsoleFixtures.now, engine: ConsoleFixtures.engine,
            timeZone: TimeZone(identifier: "UTC")!, maxTraces: 10)
        for index in 0..<25 {
            var attempt = ConsoleFixtures.attempts[index % 3]
            attempt.url = "https://host\(index).lab.test/"
            recordTrace(attempt, runID: 1, state: &s)
        }
        #expect(s.traces.count == 10)
        #expect(s.traceAt(row: 0)?.attempt.url == "https://host24.lab.test/")
        #expect(s.traceAt(row: 9)?.attempt.url == "https://host15.lab.test/")
        _ = reduce(into: &s, action: .key(.escape))
        _ = reduce(into: &s, action: .key(.character("3")))
        ConsoleFixtures.send(&s, keys: "/host2")
        #expect(s.traceListCount == 5)  // host20...host24
        _ = reduce(into: &s, action: .key(.enter))
        ConsoleFixtures.send(&s, keys: "G")
        #expect(s.traceAt(row: s.tracesView.cursor.selected)?.attempt.url == "https://host20.lab.test/")
        _ = reduce(into: &s, action: .key(.escape))  // clears the filter
        #expect(s.traceListCount == 10)
    }

    @Test("only the newest traces keep headers, certificates and logs")
    func detailRetention() {
        var s = ConsoleState(
            size: TerminalSize(width: 80, height: 24), now: ConsoleFixtures.now, engine: ConsoleFixtures.engine,
            timeZone: TimeZone(identifier: "UTC")!, maxTraces: 10, maxTraceDetails: 2)
        for _ in 0..<4 { recordTrace(ConsoleFixtures.attempts[2], runID: 1, state: &s) }
        #expect(s.traceAt(row: 0)?.detailed == true && s.traceAt(row: 1)?.detailed == true)
        #expect(s.traceAt(row: 2)?.detailed == false)
        #expect(s.traceAt(row: 2)?.attempt.hops.first?.log.isEmpty == true)
        #expect(s.traceAt(row: 2)?.attempt.timings.total == 5.6)
        _ = reduce(into: &s, action: .key(.escape))
        _ = reduce(into: &s, action: .key(.character("3")))
        ConsoleFixtures.send(&s, keys: "jj")
        _ = reduce(into: &s, action: .key(.enter))
        #expect(render(s, size: TerminalSize(width: 120, height: 40)).text.contains("Details dropped"))
    }

    @Test("e exports the traces listed, grouped by probe, to a file named by the clock")
    func export() {
        var s = state()
        _ = reduce(into: &s, action: .key(.character("3")))
        let effects = reduce(into: &s, action: .key(.character("e")))
        guard case .export(let reports, let base) = effects.first else {
            Issue.record("no export effect: \(effects)")
            return
        }
        #expect(base == "./ipdirect-20261123-080000")
        #expect(reports.count == 1)
        #expect(reports.first?.attempts.count == 3)
        #expect(reports.first?.verdict.recommended == .directSNI)
        _ = reduce(into: &s, action: .exported([base + ".jsonl", base + ".har"]))
        #expect(s.message.contains("ipdirect-20261123-080000.jsonl"))
    }

    @Test("Enter opens a trace, Esc goes back; the lab fault keys ask the engine")
    func detailAndFault() {
        var s = state()
        _ = reduce(into: &s, action: .key(.character("3")))
        _ = reduce(into: &s, action: .key(.enter))
        #expect(render(s).text.contains("Phases"))
        _ = reduce(into: &s, action: .key(.escape))
        #expect(s.traceDetail.sequence == nil)
        _ = reduce(into: &s, action: .key(.character("4")))
        #expect(reduce(into: &s, action: .key(.character("F"))) == [.setLabFault(.error)])
        #expect(reduce(into: &s, action: .key(.character("N"))) == [.setLabFault(LabFault.none)])
    }

    @Test("a probe refused before any lookup shows its reason, not 'resolving' and an empty matrix")
    func refusedProbe() {
        var s = ConsoleFixtures.emptyState(size: TerminalSize(width: 100, height: 24))
        _ = reduce(into: &s, action: .key(.character("p")))
        ConsoleFixtures.send(&s, keys: "/nohost")
        _ = reduce(into: &s, action: .key(.enter))
        _ = reduce(
            into: &s,
            action: .probeEvent(runID: 1, .rejected(ProbeURLError(url: "/nohost", reason: "not a valid URL (no host)")))
        )
        _ = reduce(into: &s, action: .probeEnded(runID: 1))
        let text = render(s).text
        #expect(text.contains("failed: not a valid URL (no host)"))
        #expect(!text.contains("resolving"))
        #expect(!text.contains("direct-sni    -"))
    }

    @Test("two quick presses of F step the lab fault twice, before the lab has answered the first")
    func quickFaultPresses() {
        var s = state()
        _ = reduce(into: &s, action: .key(.character("4")))
        let first = reduce(into: &s, action: .key(.character("F")))
        let second = reduce(into: &s, action: .key(.character("F")))
        #expect(first == [.setLabFault(LabFault.slow.next)])
        #expect(second == [.setLabFault(LabFault.slow.next.next)])
        // The lab's answers, in order, leave the second in force.
        _ = reduce(into: &s, action: .labFaultChanged(LabFault.slow.next))
        _ = reduce(into: &s, action: .labFaultChanged(LabFault.slow.next.next))
        #expect(s.labFault == LabFault.slow.next.next)
    }

    @Test("the help lists every binding of the key map")
    func helpCoversKeyMap() {
        var s = state()
        _ = reduce(into: &s, action: .key(.character("?")))
        var text = ""
        for page in 0..<4 {
            s.helpView.scroll = page * 18
            text += render(s, size: TerminalSize(width: 200, height: 60)).text
        }
        for binding in KeyMap.standard.bindings {
            #expect(text.contains(binding.summary), "help misses: \(binding.summary)")
        }
    }

    @Test("q and Ctrl-C quit, even while typing")
    func quitting() {
        var s = ConsoleFixtures.emptyState()
        ConsoleFixtures.send(&s, keys: "pq")
        #expect(s.input == "q")
        #expect(reduce(into: &s, action: .key(.control("c"))) == [.quit])
        var t = state()
        #expect(reduce(into: &t, action: .key(.character("q"))) == [.quit])
        #expect(t.quitting)
    }

    @Test("a resize redraws at the new size")
    func resize() {
        var s = state()
        _ = reduce(into: &s, action: .resize(TerminalSize(width: 120, height: 40)))
        let buffer = render(s)
        #expect(buffer.width == 120 && buffer.height == 40)
    }
}
