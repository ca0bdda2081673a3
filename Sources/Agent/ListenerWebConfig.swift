// `--web-config-file`: TLS and basic auth for the agent's listener in the file format of
// Prometheus' exporter-toolkit (`tls_server_config`, `basic_auth_users` with bcrypt hashes).
import CCrypt
import Crypto
import Foundation
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
            throw AgentSettingError("--web-config-file \(path): \(error)")
        }
        try self.init(text: text, path: path)
    }

    init(text: String, path: String) throws(AgentSettingError) {
        var section: String?
        var certificate: String?
        var key: String?
        users = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = Self.uncommented(raw)
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            func problem(_ what: String) -> AgentSettingError {
                AgentSettingError("--web-config-file \(path) line \(index + 1): \(what)")
            }
            guard let colon = line.firstIndex(of: ":") else { throw problem("expected 'name: value'") }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = Self.unquoted(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
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
                guard !name.isEmpty, value.hasPrefix("$") else {
                    throw problem("basic_auth_users: '\(name)' needs a bcrypt hash ($2y$...)")
                }
                users[name] = value
            default:
                throw problem("indented line outside tls_server_config or basic_auth_users")
            }
        }
        switch (certificate, key) {
        case (nil, nil): tls = nil
        case (let certificate?, let key?): tls = (certificate, key)
        default: throw AgentSettingError("--web-config-file \(path): tls_server_config needs cert_file and key_file")
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

    /// Whether an `Authorization` header names a user and the password of its hash.
    ///
    /// crypt_r runs bcrypt (tens of milliseconds at cost 10): callers run it off the event loop.
    /// A pair that checked out is remembered by its SHA-256, as exporter-toolkit caches, so a
    /// scrape every few seconds does not pay for bcrypt each time.
    func authorizes(_ header: String?, remembered: Locked<Set<Data>>) -> Bool {
        guard !users.isEmpty else { return true }
        guard let header, header.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":")
        else { return false }
        let user = String(pair[..<colon])
        let password = String(pair[pair.index(after: colon)...])
        guard let hash = users[user] else { return false }
        let fingerprint = Data(SHA256.hash(data: Data("\(user)\u{0}\(password)\u{0}\(hash)".utf8)))
        if remembered.withLock({ $0.contains(fingerprint) }) { return true }
        guard Self.matches(password, hash: hash) else { return false }
        remembered.withLock { known in
            if known.count >= 1024 { known.removeAll() }
            known.insert(fingerprint)
        }
        return true
    }

    /// crypt_r of `password` with `hash` as its setting equals `hash`, compared in constant time.
    static func matches(_ password: String, hash: String) -> Bool {
        var data = crypt_data()
        guard let result = crypt_r(password, hash, &data) else { return false }
        let computed = Array(String(cString: result).utf8)
        let expected = Array(hash.utf8)
        guard computed.count == expected.count, !computed.starts(with: Array("*".utf8)) else { return false }
        return zip(computed, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
