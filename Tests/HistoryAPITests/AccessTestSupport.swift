import HistoryTestSupport
@preconcurrency import Crypto
import Foundation
import HTTPCore
import HistoryAPI
import HistoryStore
import HistoryWiring
import Testing

/// Mints the JWTs the access tests send: well-formed ones with the keys the
/// test server is given, and each kind of broken one.
///
/// Written from RFC 7515/7519 with Crypto's HMAC and P-256 directly, not
/// with the server's own parsing code, so a shared misreading of the RFC
/// cannot make both sides agree on a wrong token.
struct TokenMinter: Sendable {
    static let hs256KeyID = "hs1"
    static let es256KeyID = "es1"
    static let audience = "history-tests"

    let secret: [UInt8] = Array("a-test-secret-of-more-than-32-bytes-0123456789".utf8)
    let signingKey = P256.Signing.PrivateKey()

    /// The secret file's text: `KID SECRET` per line.
    var secretFile: String { "\(Self.hs256KeyID) \(String(decoding: secret, as: UTF8.self))\n" }
    var publicKeyPEM: String { signingKey.publicKey.pemRepresentation }

    enum Algorithm { case hs256, es256, none }

    /// A token; `claims` is the JSON object's inside, e.g. `"sub":"ana","exp":123`.
    func token(alg: Algorithm = .hs256, kid: String? = TokenMinter.hs256KeyID, algName: String? = nil,
               claims: String, secret override: [UInt8]? = nil) -> String {
        let name = algName ?? (alg == .hs256 ? "HS256" : alg == .es256 ? "ES256" : "none")
        let header = "{\"alg\":\"\(name)\",\"typ\":\"JWT\"" + (kid.map { ",\"kid\":\"\($0)\"" } ?? "") + "}"
        let input = Self.base64URL(Array(header.utf8)) + "." + Self.base64URL(Array("{\(claims)}".utf8))
        let signature: [UInt8]
        switch alg {
        case .hs256:
            let key = SymmetricKey(data: override ?? secret)
            signature = Array(HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: key))
        case .es256:
            signature = Array((try! signingKey.signature(for: Array(input.utf8))).rawRepresentation)
        case .none:
            signature = []
        }
        return input + "." + Self.base64URL(signature)
    }

    /// The claims of a valid token for `subject` (an hour left), optionally admin.
    static func claims(subject: String, admin: Bool = false, audience: String = TokenMinter.audience,
                       expiresIn seconds: Int = 3600) -> String {
        let exp = Int(Date().timeIntervalSince1970) + seconds
        return "\"sub\":\"\(subject)\",\"exp\":\(exp),\"aud\":\"\(audience)\"" + (admin ? ",\"scope\":\"admin\"" : "")
    }

    func user(_ subject: String) -> String { token(claims: Self.claims(subject: subject)) }
    func userES256(_ subject: String) -> String { token(alg: .es256, kid: Self.es256KeyID, claims: Self.claims(subject: subject)) }
    func admin(_ subject: String = "backend") -> String { token(claims: Self.claims(subject: subject, admin: true)) }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A server in tokens mode (HS256 `hs1`, ES256 `es1`, audience
/// `history-tests`) over a real SQLite file in a temporary folder.
func withTokenServer<T>(_ adjust: (inout ServerConfiguration) -> Void = { _ in },
                        _ body: (RunningServer, TokenMinter) throws -> T) throws -> T {
    let minter = TokenMinter()
    return try withTemporaryDirectory { keys in
        let secretPath = keys.url.appending(path: "hs256.keys").path
        let publicKeyPath = keys.url.appending(path: "es1.pem").path
        try minter.secretFile.write(toFile: secretPath, atomically: true, encoding: .utf8)
        try minter.publicKeyPEM.write(toFile: publicKeyPath, atomically: true, encoding: .utf8)
        var configuration = RunningServer.defaultConfiguration
        configuration.jwtHS256SecretFile = secretPath
        configuration.jwtES256PublicKeys = [.init(kid: TokenMinter.es256KeyID, path: publicKeyPath)]
        configuration.jwtAudience = TokenMinter.audience
        adjust(&configuration)
        return try withRunningServer(configuration: configuration) { server in try body(server, minter) }
    }
}

/// An open-mode server with `adjust` applied to its configuration.
func withOpenServer<T>(_ adjust: (inout ServerConfiguration) -> Void, _ body: (RunningServer) throws -> T) throws -> T {
    var configuration = RunningServer.defaultConfiguration
    adjust(&configuration)
    return try withRunningServer(configuration: configuration, body)
}

extension HTTPClientConnection {
    /// One request with an optional bearer token and JSON body.
    func call(_ method: HTTPMethod, _ target: String, token: String? = nil, json: String? = nil,
              headers extra: [(String, String)] = []) throws -> HTTPClientResponse {
        var headers: HTTPHeaders = [:]
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        let body = json.map { Array($0.utf8) } ?? []
        if json != nil { headers.add(name: "Content-Type", value: "application/json") }
        headers.add(name: "Content-Length", value: "\(body.count)")
        for (name, value) in extra { headers.replaceOrAdd(name: name, value: value) }
        return try request(HTTPRequest(method: method, target: target, headers: headers, body: body))
    }
}

extension HTTPClientResponse {
    /// Everything a client sees but the `Date` header, which moves with the clock.
    var withoutDate: String {
        let fields = headers.filter { !$0.name.caseInsensitiveEquals("Date") }.map { "\($0.name): \($0.value)" }
        return "\(status) \(reason)\n" + fields.joined(separator: "\n") + "\n\n" + bodyText
    }
}

extension HTTPClientConnection {
    /// Conversation `id` owned by the user whose token is `token`, as that
    /// user's create with an id once made it: a user token may not choose
    /// an id (docs/API.md, "Edges"), so an admin creates it and makes the
    /// token's subject its owner. The owner `PUT`'s status (201 when made).
    func createConversation(_ id: String, ownedBy token: String) throws -> Int {
        let admin = TokenMinter().admin()
        let created = try call(.post, "/v1/conversations", token: admin, json: #"{"id":"\#(id)"}"#)
        guard created.status == 201 else { return created.status }
        return try call(.put, "/v1/conversations/\(id)/members/\(Self.subject(of: token))", token: admin,
                        json: #"{"role":"owner"}"#).status
    }

    /// The `sub` of a compact JWT, read without verifying it.
    static func subject(of token: String) -> String {
        var payload = String(token.split(separator: ".")[1])
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while payload.count % 4 != 0 { payload += "=" }
        let object = (try? JSONSerialization.jsonObject(with: Data(base64Encoded: payload) ?? Data())) as? [String: Any]
        return object?["sub"] as? String ?? ""
    }
}
