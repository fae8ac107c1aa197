import Foundation
import HTTPCore
import HistoryStore
import HistorySQLite
import HistoryTestSupport
import Testing
@testable import HistoryAPI

/// The contract names everything the server does: every route of the
/// server's own router and every case of `ErrorCode` (with its status) is
/// in docs/API.md and openapi.yaml, and nothing is there that the server
/// lacks. A new route or code fails here, with a message saying which row
/// to add where. (`scripts/check_openapi.py` compares the documents with
/// each other, parameters and docs/routes.md included.)
@Suite("The contract covers the server")
struct ContractCoverageTests {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    private static func text(_ path: String) throws -> String {
        try String(contentsOf: repository.appending(path: path), encoding: .utf8)
    }

    /// `METHOD /pattern` of every route the live router holds, as the
    /// server wires it (every `*Routes` registered by `APIResponder`).
    private static func serverRoutes() throws -> Set<String> {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: folder.databasePath, durability: .normal))
        defer { store.close() }
        let api = APIResponder(store: store, metrics: Metrics(), logger: Logger(level: .error), accessLog: nil, readThreads: 1,
                               webViewer: WebViewer())
        defer { api.stopReadPool() }
        return Set(api.routeLabels)
    }

    /// The lines of a Markdown section, up to the next heading of its level or above.
    private static func section(_ heading: String, of text: String) -> [Substring] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasSuffix(" " + heading) && $0.hasPrefix("#") }) else { return [] }
        let level = lines[start].prefix { $0 == "#" }.count
        let rest = lines[(start + 1)...]
        let end = rest.firstIndex { line in
            let hashes = line.prefix { $0 == "#" }.count
            return hashes > 0 && hashes <= level && line.dropFirst(hashes).hasPrefix(" ")
        } ?? lines.endIndex
        return Array(lines[(start + 1)..<end])
    }

    /// `METHOD /path` of each row `| \`METHOD /path?query\` | ...` of docs/API.md's endpoint table.
    private static func contractRoutes() throws -> Set<String> {
        var routes: Set<String> = []
        for line in section("Endpoints", of: try text("docs/API.md")) {
            if let match = line.firstMatch(of: /^\|\s*`([A-Z]+) (\/[^`?\s]*)[^`]*`\s*\|/) {
                routes.insert("\(match.output.1) \(match.output.2)")
            }
        }
        return routes
    }

    /// `METHOD /path` of every operation in openapi.yaml, HEAD and OPTIONS
    /// aside (HEAD follows GET, checked by the script).
    private static func specRoutes() throws -> Set<String> {
        var routes: Set<String> = []
        var path: Substring?
        var inPaths = false
        for line in try text("openapi.yaml").split(separator: "\n") {
            if !line.hasPrefix(" ") { inPaths = line == "paths:" }
            guard inPaths else { continue }
            if let match = line.wholeMatch(of: /\ {2}(\/\S*):/) {
                path = match.output.1
            } else if let match = line.wholeMatch(of: /\ {4}(get|post|put|patch|delete):/), let path {
                routes.insert("\(match.output.1.uppercased()) \(path)")
            }
        }
        return routes
    }

    /// `code: status` of each row `| \`code\` | 400 | ...` of docs/API.md's error table.
    private static func contractCodes() throws -> [String: Int] {
        var codes: [String: Int] = [:]
        for line in section("Error codes", of: try text("docs/API.md")) {
            if let match = line.firstMatch(of: /^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|/) {
                codes[String(match.output.1)] = Int(match.output.2)
            }
        }
        return codes
    }

    /// The values of openapi.yaml's `components.schemas.ErrorCode.enum`.
    private static func specCodes() throws -> Set<String> {
        let lines = try text("openapi.yaml").split(separator: "\n")
        guard let schema = lines.firstIndex(of: "    ErrorCode:"),
              let list = lines[schema...].firstIndex(of: "      enum:") else { return [] }
        var codes: Set<String> = []
        for line in lines[(list + 1)...] {
            guard let match = line.wholeMatch(of: /\ {8}- ([a-z_]+)/) else { break }
            codes.insert(String(match.output.1))
        }
        return codes
    }

    @Test func everyRouteOfTheServerIsInTheContractAndTheSpecAndNoOther() throws {
        let server = try Self.serverRoutes()
        let contract = try Self.contractRoutes()
        let spec = try Self.specRoutes()
        try #require(server.count >= 15, "the router holds only \(server.sorted())")
        for route in server.subtracting(contract).sorted() {
            Issue.record("\(route) is a route of the server but not in docs/API.md's endpoint table: add a row | `\(route)` | does | success |")
        }
        for route in contract.subtracting(server).sorted() {
            Issue.record("\(route) is in docs/API.md's endpoint table but the server has no such route")
        }
        for route in server.subtracting(spec).sorted() {
            Issue.record("\(route) is a route of the server but not an operation of openapi.yaml: add it under paths")
        }
        for route in spec.subtracting(server).sorted() {
            Issue.record("\(route) is an operation of openapi.yaml but the server has no such route")
        }
    }

    @Test func everyErrorCodeOfTheServerIsInTheContractWithItsStatusAndInTheSpec() throws {
        let server = Dictionary(uniqueKeysWithValues: ErrorCode.allCases.map { ($0.rawValue, $0.status.code) })
        let contract = try Self.contractCodes()
        let spec = try Self.specCodes()
        try #require(contract.count >= 10 && spec.count >= 10, "docs/API.md's error table or openapi.yaml's enum has changed shape")
        for (code, status) in server.sorted(by: { $0.key < $1.key }) {
            switch contract[code] {
            case nil:
                Issue.record("error code \(code) (\(status)) is a case of ErrorCode but not in docs/API.md's error table: add a row | `\(code)` | \(status) | when |")
            case let documented? where documented != status:
                Issue.record("error code \(code): docs/API.md says \(documented), the server answers \(status)")
            default:
                break
            }
            if !spec.contains(code) {
                Issue.record("error code \(code) is a case of ErrorCode but not in openapi.yaml's ErrorCode enum")
            }
        }
        for code in Set(contract.keys).union(spec).subtracting(server.keys).sorted() {
            Issue.record("error code \(code) is documented (docs/API.md or openapi.yaml) but not a case of ErrorCode")
        }
    }
}
