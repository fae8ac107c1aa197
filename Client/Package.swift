// swift-tools-version: 6.1
import PackageDescription

/// The client library alone: what an app depends on. It resolves no
/// package at all (Foundation and Observation come with the toolchain),
/// where the repository's root package would bring the server's
/// swift-crypto, swift-argument-parser and libpq's system target.
///
///     .package(url: "https://github.com/<owner>/chat-history", ...)   // no: the root package
///     .package(path: "chat-history/Client")                            // yes: this one
///
/// The sources live here; the root package's `HistoryClient` target points
/// its `path:` at them, so the server's tests and tools build the same files.
let package = Package(
    name: "HistoryClient",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "HistoryClient", targets: ["HistoryClient"]),
    ],
    targets: [
        .target(
            name: "HistoryClient",
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
    ]
)
