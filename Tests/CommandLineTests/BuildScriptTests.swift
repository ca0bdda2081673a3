// What a user meets before ipdirect runs: `make build` installs only what running needs (the test
// suite's packages come with `make test`) and says in words what it builds and how far along it is.
import Foundation
import TestSupport
import Testing

/// The repository's root, from this file's place in it.
private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

@Suite struct BuildScriptTests {
    private static let runPackages = [
        "libcurl4-openssl-dev", "libssl-dev", "libc-ares-dev", "libcrypt-dev", "libncurses-dev", "pkg-config",
    ]
    private static let testPackages = [
        "tmux", "python3-jsonschema", "bind9-dnsutils", "prometheus", "zsh", "fish", "man-db", "groff-base",
        "nftables", "unbound", "faketime", "mitmproxy", "tinyproxy-bin", "iproute2", "opentelemetry-proto (pip)",
    ]

    @Test("install-deps run wants only what building and running needs; test adds the suite's packages")
    func dependencyModes() async throws {
        let run = try await ChildProcess.shell("\(root)/scripts/install-deps.sh --list run")
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.split(separator: "\n").map(String.init) == Self.runPackages, "\(run.output)")
        let test = try await ChildProcess.shell("\(root)/scripts/install-deps.sh --list test")
        let listed = Set(test.output.split(separator: "\n").map(String.init))
        #expect(listed.isSuperset(of: Self.runPackages + Self.testPackages), "\(test.output)")
        let bare = try await ChildProcess.shell("\(root)/scripts/install-deps.sh")
        #expect(bare.status == 2 && bare.errors.contains("usage: scripts/install-deps.sh"), "\(bare.errors)")

        let makefile = try String(contentsOfFile: root + "/Makefile", encoding: .utf8)
        #expect(makefile.contains("deps:\n\t@scripts/install-deps.sh run\n"))
        #expect(makefile.contains("test: test-deps\n"))
        #expect(
            makefile.hasPrefix(
                "# The two commands of the README: `make run` (builds, then the console against the lab) and `make\n# test`"
            ))
    }

    /// A build from nothing as `swift build` prints it, shortened: the counter's total grows as it plans.
    private static let freshBuild = [
        "Building for debugging...", "[1/1200] Write sources", "[2/1200] Compiling CNIOBoringSSL bio.c",
        "[3/1453] Compiling NIOCore ByteBuffer.swift", "[4/1453] Compiling NIOPosix Bootstrap.swift",
        "[5/2632] Compiling Crypto AES.swift", "[6/2632] Emitting module NIOSSL",
        "[2400/2632] Compiling NameResolution ResolverCache.swift", "[2631/2632] Linking ipdirect",
        "Build complete! (700.12s)",
    ]

    @Test("the build's progress reads as words: what is built, about how far along, how long; the log keeps all")
    func progressInWords() async throws {
        let scratch = try ScratchDirectory("build-progress")
        defer { scratch.remove() }
        let input = scratch.file("swift-build.txt")
        try (Self.freshBuild.joined(separator: "\n") + "\n").write(toFile: input, atomically: true, encoding: .utf8)
        let log = scratch.file("build/build.log")
        let result = try await ChildProcess.shell("\(root)/scripts/build-progress.sh \(log) < \(input)")
        #expect(result.status == 0, "\(result.errors)")
        let lines = result.output.split(separator: "\n").map(String.init)
        // The seconds are the script's own clock: a loaded machine can take one or more to start it.
        let opening = "building: the dependencies (CNIOBoringSSL, ...) — about 0% (2 of ~2,600 steps), "
        #expect(
            lines.first?.hasPrefix(opening) == true
                && lines.first?.dropFirst(opening.count).wholeMatch(of: /[0-9]+ s so far/) != nil,
            "\(result.output)")
        #expect(lines.contains { $0.hasPrefix("building: ipdirect itself — about 91% (2,400 of ~2,632 steps), ") })
        #expect(lines.last?.hasPrefix("built in ") == true && lines.last?.contains(log) == true, "\(result.output)")
        #expect(!result.output.contains("["), "no raw [N/M] counter: \(result.output)")
        #expect(try String(contentsOfFile: log, encoding: .utf8) == Self.freshBuild.joined(separator: "\n") + "\n")
    }

    @Test("a failed build shows its errors and where the whole log is, and fails")
    func failureShown() async throws {
        let scratch = try ScratchDirectory("build-progress")
        defer { scratch.remove() }
        let log = scratch.file("build.log")
        let result = try await ChildProcess.shell(
            "printf '[3/40] Compiling Lab Lab.swift\\n/src/Sources/Lab/Lab.swift:3:1: error: cannot find x\\n' "
                + "| \(root)/scripts/build-progress.sh \(log)")
        #expect(result.status == 1)
        #expect(
            result.errors.contains(
                "the build failed; its errors:\n/src/Sources/Lab/Lab.swift:3:1: error: cannot find x"))
        #expect(result.errors.contains("(\(log) has all of it)"), "\(result.errors)")
    }
}
