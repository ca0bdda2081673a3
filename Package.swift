// swift-tools-version:6.1
// ipdirect: a terminal console for troubleshooting HTTPDNS and IP-direct connections.
// The folder layout tells the architecture; see README.md for the map.
import PackageDescription

// Every target of ours: `any` written for existentials, and a member (a method, a property)
// visible only in files that import its module. Without the second a file that imports
// FoundationEssentials alone still calls the full Foundation's `StringProtocol.contains` when any
// module it depends on imports Foundation (TOMLKit does), and so links ICU's data into the binary
// (issue 34); with it the compiler takes the standard library's, and says when a member needs an
// import. In release builds -Osize (SwiftPM's -O comes first, the last one counts): 770 KB off the
// binary, and no cost to `ipdirect-bench probe` (CPU against curl 1.02x and 1.00x with it, 1.05x and
// 1.04x with -O, 15 rounds each; docs/benchmarks.md): the probe's time is libcurl's and OpenSSL's.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .unsafeFlags(["-Osize"], .when(configuration: .release)),
]

// The release binary's link (lld, the toolchain's): no symbol table exported for dlsym (the
// Swift driver asks for -export-dynamic; nothing looks ipdirect's symbols up, and the table was
// 4.7 MB and a longer start-up), relative relocations packed (RELR, glibc 2.36: 3.5 MB of RELA
// down to 28 KB), identical functions folded, and, through scripts/link-release.sh,
// FoundationEssentials searched before the full Foundation that TOMLKit's import names (without
// it one shared symbol linked Foundation and ICU, 43 MB) and on inputs without their unwind tables
// but TOMLKit's C++ (4.8 MB; scripts/drop-unwind-tables.py says why that is safe). Measured in
// docs/benchmarks.md.
let releaseLinkFlags = [
    "-use-ld=lld", "-Xclang-linker", "--ld-path=\(Context.packageDirectory)/scripts/link-release.sh",
    "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--icf=all",
]

let package = Package(
    name: "ipdirect",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "ipdirect", targets: ["ipdirect"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // The agent's Prometheus metrics (its OTLP traces are written by hand: Agent/OTLPEncoding.swift).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // System libraries, found through pkg-config.
        .systemLibrary(
            name: "CLibcurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CCAres", pkgConfig: "libcares",
            providers: [.apt(["libc-ares-dev"])]),
        // libxcrypt's crypt_r, which checks the bcrypt hashes of the agent's basic auth users.
        .systemLibrary(
            name: "CCrypt", pkgConfig: "libxcrypt",
            providers: [.apt(["libcrypt-dev"])]),
        // No pkgConfig for ncursesw: its flags are -D_DEFAULT_SOURCE -D_XOPEN_SOURCE=600, which SwiftPM
        // refuses ("prohibited flag(s)") on every build; the shim defines what it needs and the module
        // map links ncursesw, whose headers are in the default include path.
        .systemLibrary(
            name: "CNcurses",
            providers: [.apt(["libncurses-dev"])]),

        // Thin C shim: non-variadic curl_easy_setopt/getinfo wrappers, the X509 verify results and the
        // OpenSSL hook that checks the certificate against the original name in the handshake.
        .target(name: "CCurl", dependencies: ["CLibcurl", "COpenSSL"]),

        // Data that ships inside the binary: zone, provider presets, default config.
        .target(
            name: "BundledResources", path: "Resources",
            exclude: ["README.md"],
            resources: [
                .embedInCode("lab-zone.json"),
                .embedInCode("providers.json"),
                .embedInCode("default-config.toml"),
            ]),

        // The HTTPDNS services' ciphers and signatures (AES-CBC/GCM, DES-ECB, HMAC-SHA256, MD5) through
        // OpenSSL's EVP and swift-crypto: shared by the providers and the lab that checks them.
        .target(
            name: "WireCiphers",
            dependencies: ["COpenSSL", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),

        // What ipdirect needs beyond FoundationEssentials, on the standard library and libc: the full
        // Foundation links ICU's 38 MB of data into the binary (issue 34), so no module of ours imports it.
        .target(name: "FoundationGaps", swiftSettings: strict),

        // The one sanitizer for outside text on its way to a screen (escapes, display widths).
        .target(name: "TerminalText", dependencies: ["FoundationGaps"], swiftSettings: strict),

        // Swift face of libcurl, the only module that imports CCurl: the transfer loop (one multi
        // handle per loop, driven by its owner thread), URLs, and failures classified once.
        .target(name: "CurlTransport", dependencies: ["CCurl", "FoundationGaps"], swiftSettings: strict),

        // System DNS, a chosen DNS server (c-ares), HTTPDNS providers and their registry, the resolver
        // cache, and the resolver's settings as one merged value.
        .target(
            name: "NameResolution",
            dependencies: [
                "CurlTransport", "BundledResources", "WireCiphers", "CCAres", "TerminalText", "LabFaults",
                "FoundationGaps",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),

        // Where settings come from: one field list, read from the bundled defaults, the TOML file, the
        // environment and the command line, layered and resolved; the console's and agent's sections.
        .target(
            name: "ConfigurationSources",
            dependencies: [
                "NameResolution", "BundledResources", "FoundationGaps", .product(name: "TOMLKit", package: "TOMLKit"),
            ],
            swiftSettings: strict),

        // Test doubles at the resolver's seams: a manual clock and a scripted provider.
        .target(
            name: "NameResolutionTesting", dependencies: ["NameResolution", "FoundationGaps"], swiftSettings: strict),

        // Scenarios, URL rewriting, traces, verdicts, exporters.
        .target(
            name: "Probe",
            dependencies: [
                "NameResolution", "CurlTransport", "TerminalText",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),

        // Signals as a pipe: async-signal-safe handlers, read as a stream or from a poll loop.
        .target(name: "Signals", dependencies: ["FoundationGaps"], swiftSettings: strict),

        // The lab's vocabulary others share: its fault switch (one enum), its suggested names, and the
        // wire formats its HTTPDNS service speaks (the provider registry's lab routes name them).
        .target(name: "LabFaults", dependencies: ["FoundationGaps"], swiftSettings: strict),

        // The interactive console: state, actions, reducer, pure render, ncurses screen.
        .target(
            name: "Console",
            dependencies: [
                "Probe", "NameResolution", "ConfigurationSources", "CNcurses", "TerminalText", "Signals", "LabFaults",
                "Doctor", "Audit",
            ],
            swiftSettings: strict),

        // The embedded lab: HTTPDNS service, DNS server, origins, private CA, all on loopback.
        .target(
            name: "Lab",
            dependencies: [
                "BundledResources", "WireCiphers", "CCAres", "LabFaults", "FoundationGaps",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // The headless probe agent: a target list on an interval, Prometheus /metrics, OTLP traces,
        // JSON Lines with rotation; the probe engine and watch summaries are Probe's, as the console's are.
        .target(
            name: "Agent",
            dependencies: [
                "Probe", "NameResolution", "ConfigurationSources", "CurlTransport", "Signals", "TerminalText", "CCrypt",
                "FoundationGaps",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict),

        // `ipdirect doctor`: checks of the network between this machine and its HTTPDNS service
        // (IP stack, proxies, reachability, clock, account, DNS paths, client address, interception).
        .target(
            name: "Doctor",
            dependencies: ["NameResolution", "Probe", "CurlTransport", "TerminalText"],
            swiftSettings: strict),

        // `ipdirect audit`: traps set in the lab (names, certificates, origins) to catch an app's own
        // IP-direct mistakes, judged on the lab's ledger; one file per trap, reported as the doctor's.
        .target(
            name: "Audit",
            dependencies: ["Lab", "Doctor", "Probe", "TerminalText"],
            swiftSettings: strict),

        // The composition layer: a session built from configuration (layers, the lab when asked, the
        // provider from the registry, the cache), the doctor's context, the console's live engine.
        .target(
            name: "Composition",
            dependencies: [
                "Lab", "LabFaults", "NameResolution", "ConfigurationSources", "CurlTransport", "Probe", "Console",
                "Doctor", "Audit",
            ],
            swiftSettings: strict),

        .executableTarget(
            name: "ipdirect",
            dependencies: [
                "Composition", "Lab", "LabFaults", "NameResolution", "ConfigurationSources", "Probe", "Console",
                "TerminalText", "Signals", "Agent", "Doctor", "CurlTransport", "Audit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict,
            linkerSettings: [.unsafeFlags(releaseLinkFlags, .when(configuration: .release))]),

        // Benchmarks: a target of their own, run on demand (`make bench`), never in tests.
        .executableTarget(
            name: "ipdirect-bench",
            dependencies: [
                "Lab", "NameResolution", "ConfigurationSources", "CurlTransport", "Probe", "Console", "FoundationGaps",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict),

        // Fuzzing: the parsers of outside bytes behind one entry each (replayed by FuzzTests), and
        // the libFuzzer executable `make fuzz` builds with -sanitize=fuzzer,address.
        .target(
            name: "FuzzTargets",
            dependencies: [
                "Probe", "NameResolution", "ConfigurationSources", "CurlTransport", "TerminalText", "Console",
            ],
            swiftSettings: strict),
        .executableTarget(name: "ipdirect-fuzz", dependencies: ["FuzzTargets"], swiftSettings: strict),

        // One way for the test suites to run a program (the binary, a shell, tmux) and wait for it
        // without holding one of the cooperative threads the suites share when run in parallel.
        .target(
            name: "TestSupport", dependencies: ["NameResolution"], path: "Tests/TestSupport", swiftSettings: strict),

        // libcurl's Swift face alone: the transfer loop against the lab's TLS servers, header lines.
        .testTarget(
            name: "CurlTransportTests", dependencies: ["CurlTransport", "CCurl", "Lab"], swiftSettings: strict),
        .testTarget(
            name: "LabTests",
            dependencies: ["Lab", "CurlTransport", "TestSupport", .product(name: "NIOPosix", package: "swift-nio")],
            swiftSettings: strict),
        .testTarget(
            name: "NameResolutionTests",
            dependencies: [
                "NameResolution", "ConfigurationSources", "NameResolutionTesting", "Lab", "LabFaults", "WireCiphers",
                "BundledResources", "TestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "AgentTests",
            dependencies: [
                "Agent", "Probe", "Lab", "NameResolution", "ConfigurationSources", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "DoctorTests",
            dependencies: [
                "Doctor", "NameResolution", "CurlTransport", "ConfigurationSources", "Probe", "Lab", "LabFaults",
                "TestSupport",
            ],
            swiftSettings: strict),
        // The audit against reference clients (curl and Python, used rightly and wrongly) on loopback.
        .testTarget(
            name: "AuditTests",
            dependencies: ["Audit", "Composition", "Lab", "TestSupport"],
            exclude: ["Clients"],
            swiftSettings: strict),
        // A session from configuration against the lab: providers, cache path, doctor context.
        .testTarget(
            name: "CompositionTests",
            dependencies: [
                "Composition", "ConfigurationSources", "NameResolution", "Probe", "Lab", "LabFaults", "TestSupport",
            ],
            swiftSettings: strict),
        .testTarget(name: "SignalsTests", dependencies: ["Signals"], swiftSettings: strict),
        .testTarget(
            name: "ProbeTests",
            dependencies: ["Probe", "NameResolution", "CurlTransport", "ConfigurationSources", "Lab", "TestSupport"],
            exclude: ["RecordedOutputs"],
            swiftSettings: strict),
        .testTarget(name: "TerminalTextTests", dependencies: ["TerminalText"], swiftSettings: strict),
        .testTarget(name: "FoundationGapsTests", dependencies: ["FoundationGaps"], swiftSettings: strict),
        .testTarget(name: "FuzzTests", dependencies: ["FuzzTargets"], swiftSettings: strict),
        // Completions, man pages and the .deb, with the shells, man, dpkg and systemd-analyze.
        .testTarget(name: "PackagingTests", dependencies: ["Lab", "TestSupport"], swiftSettings: strict),
        // The command line end to end: the binary's commands, their output, exit statuses and voice.
        .testTarget(
            name: "CommandLineTests", dependencies: ["Lab", "NameResolution", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "ConsoleTests",
            dependencies: [
                "Console", "Probe", "NameResolution", "ConfigurationSources", "Doctor", "Lab", "TestSupport", "Audit",
            ],
            exclude: ["__Snapshots__"],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
