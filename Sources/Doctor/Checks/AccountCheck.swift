// The doctor's account check: whether the service takes unsigned requests, whether the configured
// secret signs ones it takes, the cipher it answers with, and a canary name resolved end to end.

import CurlTransport
import FoundationEssentials
import NameResolution

/// Check 5: does the account answer as configured?
///
/// Fails when unsigned requests are refused and no secret is set, when the signed request is
/// refused (`InvalidSignature`, `InvalidAccount`, ...), or when the canary does not resolve;
/// warns when the service answers another cipher than the configured one.
struct AccountCheck: DoctorCheck {
    let id = DoctorCheckID.account

    /// The codes that mean the clock, not the account, is wrong (the clock check reports them).
    static let clockCodes: Set<String> = ["SignatureExpired", "InvalidDuration"]

    func run(_ context: DoctorContext) async -> DoctorFinding {
        // The provider's row says whether it has an account and how it is asked: no kind falls
        // through to a guess.
        switch ProviderRegistry.entry(context.resolver.provider).doctor.account {
        case .none(let why):
            return DoctorFinding(check: id, status: .skipped, seen: why)
        case .aliCloud:
            return await alibaba(context)
        case .canary:
            let canary = await Canary.resolve(context)
            var finding = canary.finding(check: id, configuredSentence: "")
            finding.trace = canary.trace
            return finding
        }
    }

    private func alibaba(_ context: DoctorContext) async -> DoctorFinding {
        let configuration = context.resolver
        let canaryName = context.canaryName
        // The unsigned request goes to every address at once; the first that answers, in the
        // provider's order, is asked the rest, as an SDK rotates past one that does not.
        let rotation: Rotation<ServiceExchange>
        switch await ServiceAddresses.rotate(
            context,
            query: { base in
                base.url
                    + (try AliCloudServiceRequests.query(configuration, host: canaryName, signed: false, now: Date()))
            })
        {
        case .failure(let skip): return DoctorFinding(check: id, status: .skipped, seen: skip.reason)
        case .success(let found): rotation = found
        }
        guard let address = rotation.address, let unsigned = rotation.exchange else {
            return rotation.noneAnswered(id, so: "the account could not be asked")
        }
        var finding = await alibaba(context, at: address, unsigned: unsigned)
        finding.seen += rotation.note
        return finding
    }

    private func alibaba(
        _ context: DoctorContext, at address: ServiceAddress, unsigned: ServiceExchange
    ) async -> DoctorFinding {
        let configuration = context.resolver
        let base = address.own
        let account = configuration.account ?? ""
        var trace: [DoctorTraceLine] = [DoctorTraceLine(.note, "unsigned request")] + unsigned.trace
        var reproduce: [String] = [unsigned.reproduce]
        func send(signed: Bool, now: Date) async throws(ResolutionError) -> ServiceExchange {
            let query = try AliCloudServiceRequests.query(
                configuration, host: context.canaryName, signed: signed, now: now)
            let exchange = await ServiceExchange.send(base.url + query, checkName: base.checkName, context: context)
            trace.append(DoctorTraceLine(.note, signed ? "signed request" : "unsigned request"))
            trace += exchange.trace
            reproduce.append(exchange.reproduce)
            return exchange
        }
        if let blocked = unsigned.unreachable(
            id, so: "the account could not be asked", trace: trace, reproduce: reproduce)
        {
            return blocked
        }
        let unsignedCode = unsigned.reading.code.flatMap { $0 == "success" ? nil : $0 }
        let signingRequired = unsignedCode == "UnsignedInterfaceDisabled"
        var notes: [String] = []
        if signingRequired {
            notes.append("the service refuses unsigned requests (UnsignedInterfaceDisabled), so signing is required")
        }
        guard ClockCheck.signs(configuration) else {
            if signingRequired {
                return DoctorFinding(
                    check: id, status: .fail,
                    seen: "Account \(account) requires signed requests: the service refused the unsigned one "
                        + "(UnsignedInterfaceDisabled), and no secret is configured.",
                    advice: "Set the account's secret in IPDIRECT_HTTPDNS_SECRET or as secret in the configuration "
                        + "file (never on the command line, where every user of this machine can read it).",
                    trace: trace, reproduce: reproduce)
            }
            if let unsignedCode {
                return refusal(unsignedCode, unsigned, context: context, trace: trace, reproduce: reproduce)
            }
            return await withCanary(
                context, at: address, configured: unsigned, notes: ["unsigned requests are answered"], trace: trace,
                reproduce: reproduce)
        }
        var signed: ServiceExchange
        var clockNote = ""
        do {
            signed = try await send(signed: true, now: Date())
            // A clock the service disagrees with is the clock check's finding: sign again on the
            // service's time, as the SDKs do once they know the offset, to look at the account alone.
            if let code = signed.reading.code, Self.clockCodes.contains(code), let date = signed.serviceDate {
                clockNote = " when signed by the service's clock (by this machine's they are refused: \(code))"
                signed = try await send(signed: true, now: date.date)
            }
        } catch {
            return DoctorFinding(
                check: id, status: .fail, seen: "No signed query can be built: \(error).",
                advice: "Check IPDIRECT_HTTPDNS_SECRET (or secret in the configuration file).", trace: trace,
                reproduce: reproduce)
        }
        if let blocked = signed.unreachable(
            id, so: "the signed request had no answer", trace: trace, reproduce: reproduce)
        {
            return blocked
        }
        if let code = signed.reading.code, code != "success" {
            return refusal(code, signed, context: context, trace: trace, reproduce: reproduce)
        }
        notes.append("signed requests are answered" + clockNote)
        return await withCanary(
            context, at: address, configured: signed, notes: notes, trace: trace, reproduce: reproduce)
    }

    /// A refused request as a failing finding, naming the code and the request (masked).
    private func refusal(
        _ code: String, _ exchange: ServiceExchange, context: DoctorContext, trace: [DoctorTraceLine],
        reproduce: [String]
    ) -> DoctorFinding {
        let explained = AliCloudServiceRequests.explain(
            code: code, status: exchange.record.status, configuration: context.resolver,
            serverDate: exchange.serviceDate?.text, now: Date())
        let advice: String
        if case .service(_, let sentence) = explained { advice = sentence } else { advice = "\(explained)" }
        return DoctorFinding(
            check: id, status: .fail,
            seen: "The service refused GET \(exchange.shownURL) with \(code) (HTTP \(exchange.record.status)).",
            advice: advice.prefix(1).uppercased() + advice.dropFirst() + ".", trace: trace, reproduce: reproduce)
    }

    /// The cipher the service answered against the configured one, then the canary end to end,
    /// at the address that answered.
    private func withCanary(
        _ context: DoctorContext, at address: ServiceAddress, configured: ServiceExchange, notes: [String],
        trace: [DoctorTraceLine], reproduce: [String]
    ) async -> DoctorFinding {
        var notes = notes
        let cipher = context.resolver.cipher
        let wanted = cipher == .aesCBC ? 1 : cipher == .aesGCM ? 2 : 0
        let answered = configured.reading.mode
        var cipherMismatch: String?
        if context.resolver.provider == .alicloud, let answered, answered != wanted {
            cipherMismatch =
                "the service answered mode \(answered) (\(Self.cipherName(answered))) where \(cipher.rawValue) is configured"
        } else if context.resolver.provider == .alicloud {
            notes.append("answers come \(Self.cipherName(wanted)) as configured")
        }
        let canary = await Canary.resolve(context, at: address)
        var finding = canary.finding(check: id, configuredSentence: notes.joined(separator: ", "))
        finding.trace = trace + canary.trace
        finding.reproduce = reproduce
        if let cipherMismatch, finding.status == .pass {
            finding.status = .warn
            finding.seen = "The account answers, but \(cipherMismatch)."
            finding.advice = "Set \(Setting.cipher.givenAs(context.voice)) to what the account's console says."
        }
        return finding
    }

    static func cipherName(_ mode: Int) -> String {
        switch mode {
        case 0: return "in the clear"
        case 1: return "sealed with AES-CBC"
        case 2: return "sealed with AES-GCM"
        default: return "sealed with mode \(mode)"
        }
    }
}

/// The canary name resolved through the configured provider, as an app would resolve it.
struct Canary {
    var name: String
    var provider: String
    var result: Result<ProviderAnswer, ResolutionError>
    /// `ipdirect resolve` asking as the check did (the secret stays in the environment).
    var command: String

    /// - Parameter address: the service address to ask alone (the one a rotation found
    ///   answering), so a silent address before it costs nothing; nil: the provider's own order.
    ///   Only Alibaba's service addresses can be pinned: an endpoint's are its own.
    static func resolve(_ context: DoctorContext, at address: ServiceAddress? = nil) async -> Canary {
        var configuration = context.boundedResolver
        if let address, ProviderRegistry.entry(configuration.provider).doctor.addresses == .serviceDiscovery {
            configuration.pinnedServiceAddress = AliCloudServiceRequests.Address(
                url: address.own.url, label: address.label, checkName: address.own.checkName)
        }
        let command = ClientAddressCheck.resolveCommand(context.canaryName, context.resolver, clientIP: nil)
        do throws(ResolutionError) {
            let provider = try ProviderFactory.make(configuration)
            // The provider may ask several start IPs in turn before its query: one bound for all.
            let limit = context.stepTimeout
            let at = address.map { " at \($0.label)" } ?? ""
            // Whether the query left before the bound: one that never did says so, not "timed out".
            let departures = TransferDepartures()
            let result = await DoctorWaits.on(
                "\(provider.name)\(at) resolving \(context.canaryName)", owner: .account
            ) {
                await Deadline.first(within: limit) { () async -> Result<ProviderAnswer, ResolutionError> in
                    await TransferDepartures.$current.withValue(departures) {
                        do throws(ResolutionError) {
                            return .success(try await provider.resolve(context.canaryName, families: [.v4]))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
            }
            return Canary(
                name: context.canaryName, provider: provider.name,
                result: result ?? .failure(.unanswered(within: limit, departures.reading)), command: command)
        } catch {
            return Canary(
                name: context.canaryName, provider: configuration.provider.rawValue, result: .failure(error),
                command: command)
        }
    }

    var trace: [DoctorTraceLine] {
        var lines = [DoctorTraceLine(.sent, "resolve \(name) through \(provider)")]
        switch result {
        case .success(let answer):
            lines.append(DoctorTraceLine(.seen, "\(name): \(answer.ipv4.map(\.text).joined(separator: ", "))"))
        case .failure(let error):
            lines.append(DoctorTraceLine(.seen, "\(name): \(error)"))
        }
        return lines
    }

    /// Whether the canary failed on the clock alone (the clock check's finding, not the account's).
    var failedOnClock: Bool {
        guard case .failure(let error) = result else { return false }
        switch error {
        case .signatureExpired: return true
        case .service(let code, _): return AccountCheck.clockCodes.contains(code)
        default: return false
        }
    }

    /// The account's finding with the canary's result; `configuredSentence` says what was learnt before.
    func finding(check: DoctorCheckID, configuredSentence: String) -> DoctorFinding {
        var finding = plainFinding(check: check, before: configuredSentence.isEmpty ? "" : configuredSentence + "; ")
        finding.seen = finding.seen.prefix(1).uppercased() + finding.seen.dropFirst()
        return finding
    }

    private func plainFinding(check: DoctorCheckID, before: String) -> DoctorFinding {
        switch result {
        case .success(let answer):
            let ips = answer.ipv4.isEmpty ? "no address" : answer.ipv4.map(\.text).joined(separator: ", ")
            return DoctorFinding(
                check: check, status: .pass, seen: "\(before)the canary \(name) resolved to \(ips) through \(provider)."
            )
        case .failure where failedOnClock:
            return DoctorFinding(
                check: check, status: .pass,
                seen:
                    "\(before)the canary \(name) is refused by this machine's clock alone (the clock check's finding).")
        case .failure(let error):
            return DoctorFinding(
                check: check, status: .fail,
                seen: "\(before)the canary \(name) did not resolve through \(provider): \(error).",
                advice: "Repeat it with `\(command)` to see the answer, and check the account's settings.")
        }
    }
}
