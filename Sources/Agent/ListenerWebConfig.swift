// `--web-config-file`: TLS and basic auth for the agent's listener in the file format of
// Prometheus' exporter-toolkit (`tls_server_config`, `basic_auth_users` with bcrypt hashes).
import CCrypt
import FoundationEssentials
import FoundationGaps
import NameResolution

/// What the listener asks of its clients, read from an exporter-toolkit web configuration.
public struct ListenerWebConfig: Sendable {
    /// The certificate chain and key the listener serves TLS with; nil for plain HTTP.
    public var tls: (certificateFile: String, keyFile: String)?
    /// User names and their crypt(5) hashes (bcrypt in exporter-toolkit's files); empty: no auth.
    public var users: [String: String]

    public init(tls: (certificateFile: String, keyFile: String)? = nil, users: [String: String] = [:]) {
        self.tls = tls
        self.users = users
    }

    /// Reads the file. The format is the YAML exporter-toolkit writes; what this reads of it is
    /// its two sections of `name: value` lines, each value plain or quoted (ipdirect has no YAML
    /// library: anything else is refused with the line, never guessed at).
    ///
    /// - Throws: `AgentSettingError` naming the file, the line and what is wrong.
    public init(file path: String) throws(AgentSettingError) {
        let text: String
        do {
            text = try TextFile.contents(of: path, accepting: .regularFile)
        } catch {
            throw AgentSettingError(.webConfigFile, value: path, ": \(error)")
        }
        try self.init(text: text, path: path)
    }

    init(text: String, path: String) throws(AgentSettingError) {
        var section: String?
        var certificate: String?
        var key: String?
        users = [:]
        // Where each name was first given, by section: a second one would silently win.
        var seen: [String: Int] = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = Self.uncommented(raw)
            if line.trimmingWhitespace().isEmpty { continue }
            func problem(_ what: String) -> AgentSettingError {
                AgentSettingError(.webConfigFile, value: path, " line \(index + 1): \(what)")
            }
            guard let colon = line.firstIndex(of: ":") else { throw problem("expected 'name: value'") }
            let name = line[..<colon].trimmingWhitespace()
            let value = Self.unquoted(line[line.index(after: colon)...].trimmingWhitespace())
            let place = (line.hasPrefix(" ") ? (section ?? "") + "." : "") + name
            if let first = seen[place] {
                throw problem("'\(name)' is given twice (first on line \(first)); keep one")
            }
            seen[place] = index + 1
            if !line.hasPrefix(" ") {
                guard ["tls_server_config", "basic_auth_users"].contains(name), value.isEmpty else {
                    throw problem(
                        "'\(name)' is not read here: ipdirect reads tls_server_config (cert_file, key_file) and basic_auth_users"
                    )
                }
                section = name
                continue
            }
            switch section {
            case "tls_server_config":
                switch name {
                case "cert_file": certificate = value
                case "key_file": key = value
                default:
                    throw problem("tls_server_config: '\(name)' is not read here (cert_file and key_file are)")
                }
            case "basic_auth_users":
                guard !name.isEmpty else { throw problem("basic_auth_users: a user needs a name") }
                if let reason = Self.hashProblem(value) { throw problem("basic_auth_users: '\(name)' \(reason)") }
                users[name] = value
            default:
                throw problem("indented line outside tls_server_config or basic_auth_users")
            }
        }
        switch (certificate, key) {
        case (nil, nil): tls = nil
        case (let certificate?, let key?): tls = (certificate, key)
        default:
            throw AgentSettingError(.webConfigFile, value: path, ": tls_server_config needs cert_file and key_file")
        }
    }

    private static func uncommented(_ line: Substring) -> String {
        // A '#' starts a comment where YAML says so: at the start or after a space.
        var previous: Character = " "
        var quote: Character?
        for (offset, character) in line.enumerated() {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "#" && previous == " " {
                return String(line.prefix(offset))
            }
            previous = character
        }
        return String(line)
    }

    private static func unquoted(_ value: String) -> String {
        guard value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first else {
            return value
        }
        return String(value.dropFirst().dropLast())
    }

    /// The bcrypt costs the listener takes. 4 is bcrypt's least. Each step doubles a check's
    /// time: 10 (htpasswd's and exporter-toolkit's examples) took 52 ms on the 2-core machine this
    /// runs on, 14 under a second idle and 1.7 s loaded; 16 would take 3.5 to 7 s, and a few
    /// checks queued for the one bcrypt at a time would outlast Prometheus' 10 s scrape timeout;
    /// 31 takes days.
    static let costs = 4...14

    /// What is wrong with a `basic_auth_users` value; nil for a bcrypt hash the listener takes.
    /// exporter-toolkit takes bcrypt only; crypt(5)'s other schemes (MD5-crypt `$1$`, SHA-crypt,
    /// yescrypt) would log in here and not there, so they are refused, never guessed at.
    static func hashProblem(_ hash: String) -> String? {
        let parts = hash.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty, ["2a", "2b", "2y"].contains(parts[1]) else {
            let scheme =
                switch hash.split(separator: "$", maxSplits: 2, omittingEmptySubsequences: false).dropFirst().first {
                case "1"?: "an MD5-crypt hash ($1$)"
                case "5"?: "a SHA-256-crypt hash ($5$)"
                case "6"?: "a SHA-512-crypt hash ($6$)"
                case "y"?: "a yescrypt hash ($y$)"
                default: "something else"
                }
            return
                "needs a bcrypt hash ($2a$, $2b$ or $2y$, as htpasswd -nB writes), not \(scheme): the listener checks bcrypt only, as exporter-toolkit does"
        }
        guard parts[2].count == 2, parts[2].allSatisfy({ ("0"..."9").contains($0) }), let cost = Int(parts[2]) else {
            return "has a bcrypt hash without its two-digit cost ($2b$10$...)"
        }
        guard costs.contains(cost) else {
            return
                "has a bcrypt cost of \(cost); the listener takes \(costs.lowerBound) to \(costs.upperBound) (each step doubles the time a check takes; htpasswd -nBC 10 makes a new hash)"
        }
        let digits = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        guard parts[3].count == 53, parts[3].allSatisfy({ digits.contains($0) }) else {
            return "has a bcrypt hash whose salt and digest are not 53 characters of bcrypt's alphabet"
        }
        return nil
    }

    /// The user and password an `Authorization: Basic` header names; nil for any other header.
    static func credentials(_ header: String?) -> (user: String, password: String)? {
        guard let header, header.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingWhitespace()),
            let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":")
        else { return nil }
        return (String(pair[..<colon]), String(pair[pair.index(after: colon)...]))
    }

    /// libxcrypt's crypt_r of `password` with `setting` (a hash, or its leading salt and cost):
    /// the hash it computes, nil when crypt_r refuses.
    @Sendable static func crypt(_ password: String, _ setting: String) -> String? {
        var data = crypt_data()
        guard let result = crypt_r(password, setting, &data) else { return nil }
        return String(cString: result)
    }

    /// `computed` (crypt's answer) equals `hash`, compared in constant time; a failure token
    /// (`*0`) never does.
    static func matches(_ computed: String?, hash: String) -> Bool {
        guard let computed else { return false }
        let bytes = Array(computed.utf8)
        let expected = Array(hash.utf8)
        guard bytes.count == expected.count, !bytes.starts(with: Array("*".utf8)) else { return false }
        return zip(bytes, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
