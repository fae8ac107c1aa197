// swift-tools-version: 6.1
import PackageDescription

// A SwiftUI chat screen on ChatScreenModel. Apple platforms only (SwiftUI);
// on Linux CI parses its sources (Tests/HistoryClientTests/ExampleSourcesTests).
// It depends on the client's own package in Client/, so it resolves
// nothing of the server's (no swift-crypto, no argument-parser, no libpq).
//
//     cd Examples/ChatScreen && swift run ChatScreenExample    # macOS 15
let package = Package(
    name: "ChatScreenExample",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        .package(name: "HistoryClient", path: "../../Client"),
    ],
    targets: [
        .executableTarget(
            name: "ChatScreenExample",
            dependencies: [.product(name: "HistoryClient", package: "HistoryClient")]
        ),
    ]
)
