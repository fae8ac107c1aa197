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
        .library(name: "HistoryClient", targets: ["HistoryClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
    ],
    targets: [
        // MARK: - Storage
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .executableTarget(
            name: "MigrationEmbedder",
            swiftSettings: strictSettings
        ),
        .plugin(
            name: "EmbedMigrations",
            capability: .buildTool(),
            dependencies: ["MigrationEmbedder"]
        ),
        .target(
            name: "HistoryStore",
            dependencies: ["CSQLite"],
            swiftSettings: strictSettings,
            plugins: ["EmbedMigrations"]
        ),

        // MARK: - HTTP
        // epoll and timerfd, which Glibc's Swift module does not export.
        .target(name: "CSystem"),
        .target(
            name: "HTTPCore",
            dependencies: ["CSystem"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "HistoryAPI",
            dependencies: ["HistoryStore", "HTTPCore"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "HistoryServer",
            dependencies: ["HistoryAPI", "HistoryStore", "HTTPCore"],
            swiftSettings: strictSettings
        ),

        // MARK: - Client
        .target(
            name: "HistoryClient",
            swiftSettings: strictSettings
        ),

        // MARK: - Tools
        .executableTarget(
            name: "HistoryStoreBench",
            dependencies: [
                "HistoryStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "HistoryLoad",
            dependencies: [
                "HistoryStore", "HistoryClient", "HTTPCore", "CSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: strictSettings
        ),

        // MARK: - Tests
        .testTarget(
            name: "HistoryStoreTests",
            dependencies: ["HistoryStore", "HistoryStoreBench"],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore"], swiftSettings: strictSettings),
        .testTarget(
            name: "HistoryAPITests",
            dependencies: ["HistoryAPI", "HistoryStore", "HTTPCore"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HistoryServerTests",
            dependencies: ["HistoryServer", "HTTPCore"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HistoryClientTests",
            dependencies: ["HistoryClient", "HistoryAPI", "HistoryStore", "HTTPCore"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HistoryLoadTests",
            dependencies: ["HistoryLoad", "HistoryServer", "HTTPCore"],
            swiftSettings: strictSettings
        ),
    ]
)
