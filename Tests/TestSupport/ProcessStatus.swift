// What another process holds, from Linux /proc: its resident memory and its open descriptors,
// for tests that flood a program and check it stays within bounds and comes back after.
import Foundation

/// Resident memory and descriptors of a running process (Linux /proc; zero where there is none).
public enum ProcessStatus {
    /// VmRSS of `pid`, in MB; 0 once it is gone.
    public static func residentMegabytes(_ pid: pid_t) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }

    /// How many descriptors `pid` has open.
    public static func openDescriptors(_ pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }
}

extension ProcessStatus {
    /// The processes `pid` started, and the ones they started, depth first (from each thread's
    /// /proc children list); empty once it is gone.
    public static func descendants(of pid: pid_t) -> [pid_t] {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let children = threads.flatMap { thread in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        return children.flatMap { [$0] + descendants(of: $0) }
    }

    /// What `pid` is doing, for a failure message: its name, state (R running, S sleeping, D in
    /// the kernel, Z exited), the CPU time it used, and its threads grouped by where in the kernel
    /// each waits (a stuck program shows as every thread in futex_wait, a busy one as R and CPU).
    public static func description(of pid: pid_t) -> String {
        guard let (name, state, ticks) = stat("/proc/\(pid)") else { return "\(pid): gone" }
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var waits: [String: Int] = [:]
        for thread in threads {
            let directory = "/proc/\(pid)/task/\(thread)"
            let threadState = stat(directory)?.state ?? "?"
            let channel = (try? String(contentsOfFile: directory + "/wchan", encoding: .utf8)) ?? "?"
            let threadName = stat(directory)?.name ?? "?"
            waits["\(threadName) \(threadState) \(channel == "0" ? "-" : channel)", default: 0] += 1
        }
        let seconds = Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
        let grouped = waits.sorted { $0.key < $1.key }.map { "\($0.value)x [\($0.key)]" }.joined(separator: ", ")
        return "\(pid) \(name) state \(state), CPU \(String(format: "%.2f", seconds)) s, threads: \(grouped)"
    }

    /// The name, state and user plus system CPU ticks in `directory`/stat.
    private static func stat(_ directory: String) -> (name: String, state: String, ticks: Int)? {
        guard let text = try? String(contentsOfFile: directory + "/stat", encoding: .utf8),
            let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
        else { return nil }
        // After the name in parentheses: state, then 10 fields, then utime and stime.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12 else { return nil }
        return (
            String(text[text.index(after: open)..<close]), String(fields[0]),
            (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
        )
    }
}
