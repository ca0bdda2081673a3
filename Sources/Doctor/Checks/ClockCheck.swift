// The doctor's clock check: this machine's time against the service's `Date`, and against the
// window a signed request lives (v2 `exp`, legacy `t`), with the first signed request refused.

import FoundationEssentials
import NameResolution

/// Check 4: is this machine's clock close enough to the service's for signed requests?
///
/// Pass within 30 s; warn past 30 s; fail when signed requests are rejected (the service
/// answered `SignatureExpired`/`InvalidDuration`, or the offset is past the signature's window
/// while a secret signs the requests).
struct ClockCheck: DoctorCheck {
    let id = DoctorCheckID.clock

    /// Past this offset the check warns, whatever the window.
    static let warnAfterSeconds = 30

    func run(_ context: DoctorContext) async -> DoctorFinding {
        var rotated = ""
        var finding = await look(context, rotated: &rotated)
        finding.seen += rotated
        return finding
    }

    /// The finding; `rotated` gets the sentence on addresses passed over to reach the service.
    private func look(_ context: DoctorContext, rotated: inout String) async -> DoctorFinding {
        let configuration = context.resolver
        let signs = Self.signs(configuration)
        let exchange: ServiceExchange
        // The provider's row says where its clock is read: no kind falls through to a guess.
        switch ProviderRegistry.entry(configuration.provider).doctor.clock {
        case .none(let why):
            return DoctorFinding(check: id, status: .skipped, seen: why)
        case .aliCloud, .endpoint:
            let canary = context.canaryName
            let query = ProviderRegistry.entry(configuration.provider).doctor.clock
            // Every address at once (an endpoint's name resolved by the bounded system resolver and
            // pinned, never left to libcurl's resolver, whose wait is glibc's, not the check's).
            let rotation = await ServiceAddresses.rotate(context) { base in
                guard query == .aliCloud else { return base.url }
                return base.url
                    + (try AliCloudServiceRequests.query(configuration, host: canary, signed: signs, now: Date()))
            }
            switch rotation {
            case .failure(let skip):
                let so = skip.unreachable == nil ? "" : " Its clock could not be read."
                return DoctorFinding(check: id, status: .skipped, seen: skip.reason + so)
            case .success(let rotation):
                guard let answered = rotation.exchange else {
                    return rotation.noneAnswered(id, so: "its clock could not be read")
                }
                (exchange, rotated) = (answered, rotation.note)
            }
        }
        let trace = exchange.trace
        let reproduce = [exchange.reproduce]
        if let blocked = exchange.unreachable(
            id, so: "its clock could not be read", trace: trace, reproduce: reproduce)
        {
            return blocked
        }
        guard let date = exchange.serviceDate else {
            return DoctorFinding(
                check: id, status: .skipped,
                seen: "The service at \(exchange.target) sent no Date header to compare with.",
                trace: trace, reproduce: reproduce)
        }
        // A Date names its whole second: its middle is the best guess of the service's time.
        let offset = Int(date.date.addingTimeInterval(0.5).timeIntervalSince(exchange.localMidpoint).rounded())
        let window = Self.window(configuration)
        let code = exchange.reading.code
        var seen = Self.offsetSentence(offset) + " (its Date: \(date.text))"
        var lines = trace
        lines.append(DoctorTraceLine(.note, "offset \(offset) s" + (window.map { ", signature window \($0) s" } ?? "")))
        if let code, ["SignatureExpired", "InvalidDuration"].contains(code) {
            seen += "; it refused the signed request (\(code)): GET \(exchange.shownURL)"
            return DoctorFinding(
                check: id, status: .fail, seen: seen + ".", advice: Self.setClockAdvice(window), trace: lines,
                reproduce: reproduce)
        }
        if let window, Self.rejects(offset: offset, window: window, provider: configuration.provider) {
            let rejected =
                offset > 0
                ? "; a signed request lives \(window) s, so every one would arrive expired"
                : "; every signed request's expiry would lie more than a day ahead of the service's time"

            return DoctorFinding(
                check: id, status: signs ? .fail : .warn,
                seen: seen + rejected + (signs ? "." : " (none is signed now)."),
                advice: Self.setClockAdvice(window), trace: lines, reproduce: reproduce)
        }
        if abs(offset) > Self.warnAfterSeconds {
            return DoctorFinding(
                check: id, status: .warn, seen: seen + ".", advice: Self.setClockAdvice(window), trace: lines,
                reproduce: reproduce)
        }
        let life = window.map { "; a signed request lives \($0) s" } ?? ""
        return DoctorFinding(check: id, status: .pass, seen: seen + life + ".", trace: lines, reproduce: reproduce)
    }

    /// Whether the service refuses every signed request at this offset: a service ahead by the
    /// window or more sees each arrive expired (`SignatureExpired`); v2 behind by so much that the
    /// expiry lies more than a day ahead refuses it as too long (`InvalidDuration`).
    static func rejects(offset: Int, window: Int, provider: ProviderKind) -> Bool {
        if offset >= window { return true }
        guard let ahead = ProviderRegistry.entry(provider).doctor.signatureMaximumAhead else { return false }
        return -offset > ahead - window
    }

    /// Whether the configured provider signs its queries (its row says it can, and a secret is set).
    static func signs(_ configuration: ResolverConfiguration) -> Bool {
        ProviderRegistry.entry(configuration.provider).doctor.signs && !(configuration.secret ?? "").isEmpty
    }

    /// How long a signed request lives, for the providers that sign by time; nil for the others.
    static func window(_ configuration: ResolverConfiguration) -> Int? {
        ProviderRegistry.entry(configuration.provider).doctor.signs ? configuration.sdk.signatureLifetime : nil
    }

    /// "the service's clock is 900 s ahead of this machine's".
    static func offsetSentence(_ offset: Int) -> String {
        if offset == 0 { return "The service's clock agrees with this machine's" }
        return "The service's clock is \(abs(offset)) s \(offset > 0 ? "ahead of" : "behind") this machine's"
    }

    static func setClockAdvice(_ window: Int?) -> String {
        "Set this machine's clock right (NTP: timedatectl set-ntp true)"
            + (window.map { ", to well within the \($0) s a signed request lives." } ?? ".")
    }
}
