// What `ipdirect audit` answers: one finding per trap (pass, warn, fail or not exercised, with
// the ledger's evidence and one sentence of what to change) and the report that holds them.
import Doctor
import FoundationEssentials

/// The traps an audit sets, in the order a report lists them. The raw value is the trap's label in
/// its name (`LABEL.TOKEN.audit.lab.test`) and the stable `trap` field of the JSON report.
public enum AuditTrapID: String, Sendable, Codable, CaseIterable, Comparable {
    case wrongName = "wrong-name"
    case untrusted
    case expired
    case sni
    case host
    case postBody = "post-body"
    case redirect
    case fallback
    case fallbackTimeout = "fallback-timeout"
    case ttl
    case cookie
    case family
    case proxy

    /// The trap's name as a row shows it.
    public var title: String {
        switch self {
        case .wrongName: return "Wrong-name certificate"
        case .untrusted: return "Untrusted certificate"
        case .expired: return "Expired certificate"
        case .sni: return "SNI"
        case .host: return "Host header"
        case .postBody: return "POST body"
        case .redirect: return "Redirect"
        case .fallback: return "Fallback on error"
        case .fallbackTimeout: return "Fallback on time-out"
        case .ttl: return "TTL"
        case .cookie: return "Cookies"
        case .family: return "Address family"
        case .proxy: return "Proxy"
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}

/// How an app came out of one trap, from best to worst.
public enum AuditStatus: String, Sendable, Codable, CaseIterable, Comparable {
    case pass
    /// The app never touched the trap: no verdict, never a pass.
    case notExercised = "not-exercised"
    case warn, fail

    /// The status as a row shows it.
    public var label: String { self == .notExercised ? "not exercised" : rawValue }

    /// The doctor's status of the same weight, whose exit codes the audit shares.
    var doctorStatus: DoctorStatus {
        switch self {
        case .pass: return .pass
        case .notExercised: return .skipped
        case .warn: return .warn
        case .fail: return .fail
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}

/// One trap's verdict.
public struct AuditFinding: Sendable, Codable, Equatable {
    public var trap: AuditTrapID
    public var status: AuditStatus
    /// The URL (or URLs) the app was to use.
    public var urls: [String]
    /// One sentence of what the trap exercises.
    public var exercises: String
    /// One sentence of what was seen.
    public var seen: String
    /// One sentence of what to change, naming the remedy for the client kind; nil on a pass.
    public var advice: String?
    /// The ledger's records the verdict rests on, one a line (queries, handshakes, requests).
    public var evidence: [String]

    public init(
        trap: AuditTrapID, status: AuditStatus, urls: [String] = [], exercises: String = "", seen: String,
        advice: String? = nil, evidence: [String] = []
    ) {
        self.trap = trap
        self.status = status
        self.urls = urls
        self.exercises = exercises
        self.seen = seen
        self.advice = advice
        self.evidence = evidence
    }
}

/// A whole audit: every trap's finding, in trap order.
public struct AuditReport: Sendable, Codable, Equatable {
    /// The report format's version, raised when a field changes meaning.
    public var version = 1
    /// The run's token (in every trap name).
    public var token: String
    public var startedAt: Date
    /// How long the audit ran, in milliseconds.
    public var durationMs: Double
    public var findings: [AuditFinding]

    public init(token: String, startedAt: Date, durationMs: Double, findings: [AuditFinding]) {
        self.token = token
        self.startedAt = startedAt
        self.durationMs = durationMs
        self.findings = findings.sorted { $0.trap < $1.trap }
    }

    /// The worst status of any finding; pass for an empty report.
    public var worst: AuditStatus { findings.map(\.status).max() ?? .pass }

    /// The exit code `ipdirect audit` ends with, as the doctor's: 0 nothing warns or fails (traps
    /// not exercised count as the doctor's skipped), 1 some trap warns, 3 some trap fails.
    public var exitCode: Int32 { worst.doctorStatus.exitCode }
}
