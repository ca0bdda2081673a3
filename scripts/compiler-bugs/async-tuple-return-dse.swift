// A Swift 6.3.1 miscompile at -O (issue 32): an async closure that returns `(x, .success(try await f()))`
// from a do block, and `(x, .failure(error))` from its catch, leaves `x` unwritten on the success path.
//
//   swiftc -O -parse-as-library async-tuple-return-dse.swift -o repro && ./repro
//     crashes (SIGSEGV in swift_retain <- initializeBufferWithCopyOfBuffer for Character
//     <- tuple_initializeWithCopy <- TaskGroupBase::prepareWaitingTaskWithTask), or prints wrong names;
//   swiftc -Onone ... prints "group: wrong 0 of 20000", as does -O with -D SETTLED_FIRST (the
//     shape HTTPDNSProvider.resolveBatch uses: settle the Result, then build the tuple).
//   swiftc -O ... -Xllvm -opt-bisect-limit=N: runs clean up to the pass before LLVM's DSEPass on the
//     child closure, crashes from it on; -emit-sil shows `store host to tuple.0` before the
//     try_apply and again in the error block, -emit-ir shows no store of tuple.0 on the success path.
//   Typed throws is not needed: with `throws` and `catch { ... error as! E }` it crashes the same.
enum E: Error { case malformed(detail: String) }

struct Answer { var host: String; var v4: [String]; var v6: [String]; var ttl: Int?; var ms: Double }

@inline(never) func resolve(_ host: String) async throws(E) -> Answer {
    await Task.yield()
    if host.isEmpty { throw .malformed(detail: "empty") }
    return Answer(host: host, v4: ["127.0.0.1"], v6: [], ttl: 30, ms: 1)
}

@main struct Main {
    static func main() async {
        var bad = 0
        for _ in 0..<20_000 {
            let hosts = ["a.lab.test", "b.lab.test", "c.lab.test"]
            let got = await withTaskGroup(of: (String, Result<Answer, E>).self) { group in
                for host in hosts {
                    group.addTask {
                        #if SETTLED_FIRST
                        let result: Result<Answer, E>
                        do throws(E) { result = .success(try await resolve(host)) } catch { result = .failure(error) }
                        return (host, result)
                        #else
                        do throws(E) {
                            return (host, .success(try await resolve(host)))
                        } catch {
                            return (host, .failure(error))
                        }
                        #endif
                    }
                }
                var seen: [String] = []
                for await (host, _) in group { seen.append(host) }
                return seen
            }
            if Set(got) != Set(hosts) { bad += 1 }
        }
        print("group: wrong \(bad) of 20000")
    }
}
