import Foundation
import HistoryAPI
import HistoryClient
import HistoryTestSupport
import HistoryWiring
import Testing

/// The code BuildingAChatScreen.md and the landing page (HistoryClient.md)
/// quote that runs on Linux, run here against the server; ArticleCodeTests
/// checks the articles quote nothing else (the SwiftUI parts come from
/// Examples/ChatScreen, the inbox article's from InboxArticleTests).
@Suite("The chat screen article's code", .timeLimit(.minutes(5)))
struct DocumentationSnippetTests {
    @Test func theLandingPageOpensAModelAndAWindow() async throws {
        try await withRunningServer { server in
            _ = try await server.client.createConversation(id: "general")
            for index in 0..<3 {
                _ = try await server.client.append(to: "general", sender: "ben", body: "m\(index)")
            }
            try await Self.landingPage(URL(string: server.application.address)!)
        }
    }

    @MainActor private static func landingPage(_ address: URL) async throws {
        let client = ChatHistoryClient(baseURL: URL(string: "http://127.0.0.1:8080")!)
        client.setBaseURL(address)                                      // the test's server
        let model = ChatScreenModel(client: client, conversationID: "general", me: "ana")
        model.open()                                   // the newest page, then the live feed
        let deadline = ContinuousClock.now + .seconds(20)
        while model.rows.count < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        // model.rows: the newest messages; model.scroll.action: .scrollToBottom
        #expect(model.rows.count == 3 && model.scroll.action == .scrollToBottom)
        model.close()

        var window = MessageWindow(configuration: MessageWindowConfiguration(pageSize: 50))
        if let request = window.nextRequest(for: .open) {
            let page = try await client.page(of: "general", request.pageRequest)
            let changes = window.apply(page, for: request)   // [.replaced]: show the bottom
            #expect(changes == [.replaced] && window.messages.count == 3)
        }
    }

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
/// `swift` block of every article of the DocC catalog is a line of this
/// target's snippet tests (this file, InboxArticleTests) or of the example
/// app, and the example app parses. (InboxViewModel.swift, a file of the
/// example, is also compiled here: Articles/ links to it.)
@Suite("Article and example code")
struct ArticleCodeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func exampleSources() throws -> [URL] {
        let folder = root.appendingPathComponent("Examples/ChatScreen/Sources/ChatScreenExample")
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
    }

    /// Every article of the catalog, and how many lines of code it quotes at least.
    static let articles = [("BuildingAChatScreen.md", 30), ("BuildingTheInboxScreen.md", 60), ("HistoryClient.md", 8)]

    @Test func theCatalogHasNoOtherArticle() throws {
        let catalog = Self.root.appendingPathComponent("Client/Sources/HistoryClient/HistoryClient.docc")
        let names = try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }
        #expect(Set(names) == Set(Self.articles.map(\.0)))
    }

    /// The trimmed lines of the snippet tests and of the example app.
    static func compiledLines() throws -> Set<String> {
        let tests = Self.root.appendingPathComponent("Tests/HistoryClientTests")
        var sources = ["DocumentationSnippetTests.swift", "InboxArticleTests.swift", "SymbolDocSnippetTests.swift"]
            .map { tests.appendingPathComponent($0) }
        sources += try Self.exampleSources()
        var known: Set<String> = []
        for source in sources {
            for line in try String(contentsOf: source, encoding: .utf8).split(separator: "\n") {
                known.insert(line.trimmingCharacters(in: .whitespaces))
            }
        }
        return known
    }

    /// The examples of the doc comments (DocC shows them on each symbol's
    /// page) are compiled too: SymbolDocSnippetTests, or the example app.
    @Test func everyLineOfEveryDocCommentExampleIsCompiledCode() throws {
        let known = try Self.compiledLines()
        let library = Self.root.appendingPathComponent("Client/Sources/HistoryClient")
        let files = try #require(FileManager.default.enumerator(atPath: library.path))
            .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        var quoted = 0
        for file in files {
            var inBlock = false
            let text = try String(contentsOf: library.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("///") else {
                    inBlock = false
                    continue
                }
                let code = trimmed.dropFirst(3).trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("```") {
                    inBlock = code == "```swift"
                    continue
                }
                guard inBlock, !code.isEmpty, code != "..." else { continue }
                quoted += 1
                #expect(known.contains(code), "\(file): not compiled anywhere: \(code)")
            }
        }
        #expect(quoted > 60)
    }

    @Test(arguments: Self.articles)
    func everyLineOfTheArticleIsCompiledCode(article name: String, minimumLines: Int) throws {
        let article = try String(contentsOf: Self.root.appendingPathComponent(
            "Client/Sources/HistoryClient/HistoryClient.docc/\(name)"), encoding: .utf8)
        let known = try Self.compiledLines()
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
            #expect(known.contains(code), "\(name): not compiled anywhere: \(code)")
        }
        #expect(quoted >= minimumLines, "\(name) quotes \(quoted) lines of code")
    }

    /// The example's view model is the very file the tests compile.
    @Test func theInboxViewModelTheTestsCompileIsTheExamplesFile() throws {
        let linked = Self.root.appendingPathComponent("Tests/HistoryClientTests/Articles/InboxViewModel.swift")
        let example = Self.root.appendingPathComponent("Examples/ChatScreen/Sources/ChatScreenExample/InboxViewModel.swift")
        #expect(linked.resolvingSymlinksInPath().path == example.resolvingSymlinksInPath().path)
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
        try process.runSerialized()
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
    }
}
