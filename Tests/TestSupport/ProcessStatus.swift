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
