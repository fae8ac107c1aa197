// swift-tools-version: 6.1
import PackageDescription

// An inbox and its chat screens on ChatScreenModel. Apple platforms only (SwiftUI);
// on Linux CI parses its sources (ArticleCodeTests, in
// Tests/HistoryClientTests/DocumentationSnippetTests.swift) and the root
// package's tests compile InboxViewModel.swift, which needs no SwiftUI.
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
