import Foundation
import HistoryClient
import HistoryTestSupport
import Testing

/// The code BuildingAChatScreen.md quotes that runs on Linux, run here
/// against the server; ArticleCodeTests checks the article quotes nothing
/// else (the SwiftUI parts come from Examples/ChatScreen).
@Suite("The chat screen article's code", .timeLimit(.minutes(5)))
struct DocumentationSnippetTests {
    @Test func theScreenValueOpensAtTheBottomAndKeepsTheRowBeingRead() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "general")
            for index in 0..<60 {
                _ = try await client.append(to: "general", sender: "ben", body: "m\(index)")
            }

            var screen = ChatScreen(configuration: MessageWindowConfiguration(pageSize: 50), me: "ana")
            if let request = screen.request(for: .open) {                  // the newest 50
                let page = try await client.page(of: "general", request.pageRequest)
                screen.receive(page, for: request)
            }
            // screen.rows: .loadingOlder, then 50 messages; screen.scroll.action: .scrollToBottom
            #expect(screen.rows.first == .loadingOlder && screen.rows.count == 51)
            #expect(screen.scroll.action == .scrollToBottom)

            // The view scrolled to the top: the loader and the first message are on screen.
            let firstID = screen.window.messages[0].id
            let viewport = ChatViewport(
                visibleRows: [.init(id: .loadingOlder, top: 0), .init(id: .message(firstID), top: 40)],
                distanceFromBottom: 2400, height: 700)
            if let request = screen.viewportDidChange(viewport) {           // before=<first id>
                let page = try await client.page(of: "general", request.pageRequest)
                screen.receive(page, for: request)
            }
            // screen.scroll.action: .keep(.loadingOlder, top: 0): the row being read stays put
            #expect(screen.window.messages.count == 60)
            #expect(screen.scroll.action == .keep(.loadingOlder, top: 0) || screen.scroll.action == .keep(.message(firstID), top: 40))
        }
    }
}

/// The articles quote only code that is compiled: every line of every
/// `swift` block of BuildingAChatScreen.md is a line of this target's
/// snippet tests or of the example app, and the example app parses.
@Suite("Article and example code")
struct ArticleCodeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func exampleSources() throws -> [URL] {
        let folder = root.appendingPathComponent("Examples/ChatScreen/Sources/ChatScreenExample")
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
    }

    @Test func everyLineOfTheChatScreenArticleIsCompiledCode() throws {
        let article = try String(contentsOf: Self.root.appendingPathComponent(
            "Client/Sources/HistoryClient/HistoryClient.docc/BuildingAChatScreen.md"), encoding: .utf8)
        var sources = [Self.root.appendingPathComponent("Tests/HistoryClientTests/DocumentationSnippetTests.swift")]
        sources += try Self.exampleSources()
        var known: Set<String> = []
        for source in sources {
            for line in try String(contentsOf: source, encoding: .utf8).split(separator: "\n") {
                known.insert(line.trimmingCharacters(in: .whitespaces))
            }
        }
        var inBlock = false
        var quoted = 0
        for line in article.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inBlock = line == "```swift"
                continue
            }
            let code = line.trimmingCharacters(in: .whitespaces)
            guard inBlock, !code.isEmpty, code != "..." else { continue }
            quoted += 1
            #expect(known.contains(code), "not compiled anywhere: \(code)")
        }
        #expect(quoted > 30)
    }

    /// SwiftUI does not exist on Linux: the example app is parsed, not type-checked.
    @Test func theExampleAppParses() throws {
        let files = try Self.exampleSources()
        #expect(files.count >= 3)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc", "-parse"] + files.map(\.path)
            + [Self.root.appendingPathComponent("Examples/ChatScreen/Package.swift").path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
    }
}
