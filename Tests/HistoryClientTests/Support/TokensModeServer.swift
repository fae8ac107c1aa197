import Crypto
import Foundation
import HistoryAPI
import HistoryClient
import HistoryStore
import HistorySQLite
import HistoryTestSupport
import HistoryWiring

/// A history server in tokens mode on 127.0.0.1 (an HS256 secret file in a
/// temporary folder), and the means to mint its tokens the way an app's
/// backend would.
///
/// The use of `@unchecked Sendable` is safe for this type because every
/// stored property is a `let` of a Sendable type or `app`, whose own
/// methods are thread-safe.
final class TokensModeServer: @unchecked Sendable {
    static let keyID = "k1"
    static let secret = "client-tests-secret-0123456789-abcdefghij"

    let directory: URL
    let app: HistoryApplication
    var baseURL: URL { URL(string: app.address)! }

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("history-client-tokens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secretFile = directory.appendingPathComponent("secrets.txt")
        try "\(Self.keyID) \(Self.secret)\n".write(to: secretFile, atomically: true, encoding: .utf8)
        let configuration = ServerConfiguration(
            port: 0, databasePath: try serverDatabase(in: directory), durability: .normal,
            logLevel: .error, accessLog: false, jwtHS256SecretFile: secretFile.path)
        app = try HistoryApplication(configuration: configuration)
        try app.start()
    }

    /// A client of this server whose every request carries `provider`'s token.
    func client(wait: Duration = .seconds(1), feedTransport: FeedTransport = .automatic,
                provider: HistoryTokenProvider?) -> ChatHistoryClient {
        ChatHistoryClient(baseURL: baseURL, configuration: HistoryClientConfiguration(
            eventWait: wait, reconnect: ReconnectPolicy(initialDelay: .milliseconds(10), maximumAttempts: 3),
            feedTransport: feedTransport, tokenProvider: provider))
    }

    /// A client with a fresh admin token on every request.
    func adminClient() -> ChatHistoryClient {
        client { TokensModeServer.token(subject: "backend", admin: true) }
    }

    /// A compact HS256 JWT signed with the server's secret; `expiresIn`
    /// negative (beyond the 60 s leeway) gives one the server refuses as expired.
    static func token(subject: String, admin: Bool = false, expiresIn: Int = 3600) -> String {
        let now = Int(Date().timeIntervalSince1970)
        let header = #"{"alg":"HS256","typ":"JWT","kid":"\#(keyID)"}"#
        var claims = #"{"sub":"\#(subject)","iat":\#(now),"exp":\#(now + expiresIn)"#
        if admin { claims += #","scope":"admin""# }
        claims += "}"
        let input = base64URL(Data(header.utf8)) + "." + base64URL(Data(claims.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return input + "." + base64URL(Data(mac))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    func stop() async {
        let app = self.app
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            app.shutdown(gracePeriod: .seconds(2)) { continuation.resume() }
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `body` with a fresh tokens-mode server, stopped and deleted afterwards.
func withTokensModeServer(_ body: (TokensModeServer) async throws -> Void) async throws {
    let server = try TokensModeServer()
    do {
        try await body(server)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

/// A token provider whose answers a test scripts: it hands out `tokens` in
/// order (the last one again once they run out) and counts its calls.
///
/// The use of `@unchecked Sendable` is safe because `tokens` and `count`
/// are read and written only while `lock` is held.
final class ScriptedTokens: @unchecked Sendable {
    private let lock = NSLock()
    private var tokens: [String]
    private var count = 0

    init(_ tokens: [String]) {
        self.tokens = tokens
    }

    var calls: Int { lock.withLock { count } }

    /// Replaces what the next calls answer.
    func script(_ tokens: [String]) {
        lock.withLock { self.tokens = tokens }
    }

    var provider: HistoryTokenProvider {
        { [self] in next() }
    }

    private func next() -> String {
        lock.withLock {
            count += 1
            return tokens.count > 1 ? tokens.removeFirst() : tokens[0]
        }
    }
}
