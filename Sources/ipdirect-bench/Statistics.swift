// The summaries the benchmarks report a run of rounds by (on a shared, noisy machine the median is
// what a round typically costs, where a mean would carry every interruption) and the load beside.
import Foundation

/// The middle value (the mean of the two middle ones for an even count); 0 for none.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The value below which `fraction` of the values lie (nearest rank); 0 for none.
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

/// The machine's load average over 1, 5 and 15 minutes (/proc/loadavg), printed beside figures
/// measured on a shared machine so a reader sees when it was busy.
func loadAverage() -> String {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}
