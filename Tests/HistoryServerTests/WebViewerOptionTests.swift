import HistoryAPI
import HistoryWiring
import Testing
@testable import HistoryServer

/// `--web-viewer on|off` and `HISTORY_WEB_VIEWER`, the flag winning.
@Suite struct WebViewerOptionTests {
    private func webViewer(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Bool? {
        guard case .run(let configuration) = try ServerLaunch(arguments: arguments, environment: environment) else {
            return nil
        }
        return configuration.webViewer
    }

    @Test func onByDefault() throws {
        #expect(try webViewer([]) == true)
    }

    @Test func flagAndVariable() throws {
        #expect(try webViewer(["--web-viewer", "off"]) == false)
        #expect(try webViewer([], ["HISTORY_WEB_VIEWER": "off"]) == false)
        #expect(try webViewer(["--web-viewer", "on"], ["HISTORY_WEB_VIEWER": "off"]) == true)
        #expect(try webViewer(["--web-viewer=off"], ["HISTORY_WEB_VIEWER": "on"]) == false)
    }

    @Test func badValuesAreRefused() {
        #expect(throws: ConfigurationError.self) { try ServerLaunch(arguments: ["--web-viewer", "maybe"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try ServerLaunch(arguments: [], environment: ["HISTORY_WEB_VIEWER": "2"]) }
    }
}
