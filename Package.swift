// swift-tools-version: 6.1
import PackageDescription

/// Settings every target of ours shares: Swift 6 mode, plus the upcoming
/// features that keep existentials and imports explicit.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "chat-history",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "history-server", targets: ["HistoryServer"]),
        .executable(name: "history-load", targets: ["HistoryLoad"]),
        .executable(name: "history-store-bench", targets: ["HistoryStoreBench"]),
        .library(name: "HistoryStore", targets: ["HistoryStore"]),
        .library(name: "HistorySQLite", targets: ["HistorySQLite"]),
        .library(name: "HistoryPostgres", targets: ["HistoryPostgres"]),
        .library(name: "HistoryClient", targets: ["HistoryClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // Documentation only: `swift package generate-documentation --target HistoryClient`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: - Storage
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Writes files' text into a Swift source at build time, for the two
        // plugins that embed the schema and the web viewer.
        .executableTarget(
            name: "TextEmbedder",
            swiftSettings: strictSettings
        ),
        .plugin(
            name: "EmbedMigrations",
            capability: .buildTool(),
            dependencies: ["TextEmbedder"]
        ),
        // The store core: the model, the rules, the errors, access, waits and
        // the one front (`StoreFront`); no database library. Each backend
        // below supplies its primitives (`StoreEngine`, `SnapshotReads`).
        .target(
            name: "HistoryStore",
            swiftSettings: strictSettings
        ),
        // SQLite: the embedded default, its schema embedded from migrations/.
        .target(
            name: "HistorySQLite",
            dependencies: ["CSQLite", "HistoryStore", "HostResources"],
            swiftSettings: strictSettings,
            plugins: ["EmbedMigrations"]
        ),
        // libpq, PostgreSQL's own client library (Debian: libpq-dev, whose
        // header sits in /usr/include/postgresql: pkg-config finds it).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // PostgreSQL: connections, a pool and the migrator, on libpq; its
        // schema is embedded from migrations/postgres/.
        .target(
            name: "HistoryPostgres",
            dependencies: ["CLibPQ", "CSystem", "HistoryStore", "HostResources"],
            swiftSettings: strictSettings,
            plugins: ["EmbedMigrations"]
        ),

        // MARK: - Web viewer
        // The files of web/ (HTML, CSS, JavaScript modules), embedded at
        // build time so the one binary serves them.
        .plugin(
            name: "EmbedWebViewer",
            capability: .buildTool(),
            dependencies: ["TextEmbedder"]
        ),
        .target(
            name: "WebViewerAssets",
            swiftSettings: strictSettings,
            plugins: ["EmbedWebViewer"]
        ),

        // MARK: - HTTP
        // epoll and timerfd, which Glibc's Swift module does not export.
        .target(name: "CSystem"),
        // How many processors the process may use (affinity, cgroup CPU
        // quota): what the HTTP threads and both stores size themselves by.
        .target(
            name: "HostResources",
            dependencies: ["CSystem"],
            swiftSettings: strictSettings
        ),
        // The system's zlib, for gzip content coding (Debian: zlib1g-dev).
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Our HTTP/1.1 on epoll, server and client side: no framework.
        .target(
            name: "HTTPCore",
            dependencies: ["CSystem", "CZlib", "HostResources"],
            swiftSettings: strictSettings
        ),

        // MARK: - Server
        // The strict JSON reader (RFC 8259) of request bodies and of tokens'
        // headers and claims: a leaf, so its fuzzer links nothing else.
        .target(
            name: "StrictJSON",
            swiftSettings: strictSettings
        ),
        // The access layer, no HTTP: bearer tokens (verifier, keys and their
        // files, the verified-token cache), who may do what (AccessPolicy)
        // and the per-client limits (token buckets, keyed by subject or
        // address).
        .target(
            name: "HistoryAccess",
            dependencies: [
                "HistoryStore", "StrictJSON",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // The HTTP API of docs/API.md: router, routes, gates, JSON, streams,
        // the web viewer, metrics and the access log. Over the store core
        // alone: which backend serves it is the wiring's choice.
        .target(
            name: "HistoryAPI",
            dependencies: [
                "HistoryStore", "HistoryAccess", "StrictJSON", "HTTPCore", "WebViewerAssets",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // The application wiring: settings (ServerConfiguration), which
        // store --database opens (SQLite or PostgreSQL: the one target that
        // links both), the access mode from the key files, and the HTTP
        // server around the API (HistoryApplication).
        .target(
            name: "HistoryWiring",
            dependencies: ["HistoryAPI", "HistoryAccess", "HistoryStore", "HistorySQLite", "HistoryPostgres", "HTTPCore",
                           "HostResources"],
            swiftSettings: strictSettings
        ),
        // history-server: its flags and environment variables become a
        // ServerConfiguration, then a HistoryApplication runs until a signal.
        .executableTarget(
            name: "HistoryServer",
            dependencies: [
                "HistoryWiring", "HistoryAPI", "HistoryAccess", "HistoryStore", "HistorySQLite", "HTTPCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),

        // MARK: - Client
        // The sources are those of the client's own package in Client/ (what
        // apps depend on, without the server's dependencies); this target
        // builds the same files for the tools and the tests.
        .target(
            name: "HistoryClient",
            path: "Client/Sources/HistoryClient",
            swiftSettings: strictSettings
        ),

        // MARK: - Tools
        // The two small helpers the tools and the tests share: a seeded
        // generator and a lock around a value.
        .target(
            name: "ToolSupport",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "HistoryStoreBench",
            dependencies: [
                "HistoryStore", "HistorySQLite", "HistoryPostgres", "ToolSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "HistoryLoad",
            dependencies: [
                "HistoryStore", "HistorySQLite", "HistoryPostgres", "HistoryClient", "HTTPCore", "CSystem", "ToolSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),

        // MARK: - Tests
        // Fixtures every test target shares: the in-process server, the
        // server binary as a process, temporary stores, raw requests.
        .target(
            name: "HistoryTestSupport",
            dependencies: ["HistoryWiring", "HistoryAPI", "HistoryClient", "HistoryStore", "HistorySQLite", "HistoryPostgres", "HTTPCore", "ToolSupport"],
            path: "Tests/HistoryTestSupport",
            swiftSettings: strictSettings
        ),
        // HistoryStoreBench is here for its binary: CrashTests and
        // StoreBenchCommandTests run it as a child process.
        .testTarget(
            name: "HistoryStoreTests",
            dependencies: ["HistoryStore", "HistorySQLite", "HistoryPostgres", "HistoryStoreBench", "HistoryTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HistoryPostgresTests",
            dependencies: ["HistoryPostgres", "HistorySQLite", "HistoryTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HTTPCoreTests",
            dependencies: ["HTTPCore", "HostResources", "HistoryTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HistoryAPITests",
            dependencies: [
                "HistoryAPI", "HistoryAccess", "HistoryWiring", "StrictJSON", "HistoryClient", "HistoryStore", "HistorySQLite",
                "HTTPCore", "HistoryTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // The access layer alone: tokens, keys, the verified-token cache, rate limiters.
        .testTarget(
            name: "HistoryAccessTests",
            dependencies: ["HistoryAccess", "HistoryStore", "HistoryTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSettings
        ),
        // The strict JSON reader alone.
        .testTarget(
            name: "StrictJSONTests",
            dependencies: ["StrictJSON"],
            swiftSettings: strictSettings
        ),
        // HistoryServer is here for its binary, which ServerProcess runs.
        .testTarget(
            name: "HistoryServerTests",
            dependencies: ["HistoryServer", "HistoryWiring", "HistoryAPI", "HistoryAccess", "HistorySQLite", "HistoryPostgres", "HTTPCore", "HistoryClient", "HistoryTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HistoryClientTests",
            dependencies: [
                "HistoryClient", "HistoryWiring", "HistoryAPI", "HistoryAccess", "HistoryStore", "HistorySQLite", "HTTPCore",
                "HistoryTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HistoryLoadTests",
            dependencies: [
                "HistoryLoad", "HistoryServer", "HistoryStore", "HistorySQLite", "HistoryPostgres", "HTTPCore", "HistoryTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)

// MARK: - Fuzzing
//
// libFuzzer targets for the parsers that read what clients send. They
// exist only when `CHAT_HISTORY_FUZZ` is set (scripts/fuzz.sh sets it and
// builds, by default, into its own scratch path), so `swift build` and `swift test` never
// compile or link them: linking needs libFuzzer, and its coverage
// instrumentation would slow every other target. In that mode the parsing
// modules are compiled with `-sanitize=fuzzer` too, which is what lets
// libFuzzer see which branches an input reached; build only the `Fuzz*`
// products then, since the others do not link libFuzzer's runtime.
// docs/fuzzing.md says how to run them.
if Context.environment["CHAT_HISTORY_FUZZ"] != nil {
    let fuzzed: Set<String> = ["HTTPCore", "StrictJSON", "HistoryAccess", "HistoryAPI"]
    for target in package.targets where fuzzed.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=fuzzer"])]
    }
    let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
        ("FuzzRequestParser", ["HTTPCore"]),
        ("FuzzChunkedBodyDecoder", ["HTTPCore"]),
        ("FuzzJSONReader", ["StrictJSON"]),
        ("FuzzQueryParameters", ["HistoryAPI"]),
        ("FuzzTokenVerifier", ["HistoryAccess", "StrictJSON", .product(name: "Crypto", package: "swift-crypto")]),
    ]
    for (name, dependencies) in fuzzTargets {
        package.products.append(.executable(name: name, targets: [name]))
        package.targets.append(.executableTarget(
            name: name,
            dependencies: ["FuzzSupport"] + dependencies,
            swiftSettings: strictSettings + [.unsafeFlags(["-sanitize=fuzzer"])],
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer"])]
        ))
    }
    package.targets.append(.systemLibrary(name: "FuzzLibFuzzer"))
    package.targets.append(.target(name: "FuzzSupport", dependencies: ["FuzzLibFuzzer"], swiftSettings: strictSettings))
}
