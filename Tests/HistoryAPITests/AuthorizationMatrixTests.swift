import HistoryAccess
import HistoryTestSupport
import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import Testing

/// Every route against every kind of caller, from one table: a route or a
/// caller added without its row or column fails `everyCellIsInTheTable`.
///
/// Each cell runs on its own conversation, set up by an admin: `olga` owns
/// it, `mia` and `zed` are members, `ari` is a member who wrote message 1;
/// `nick` is in no conversation. Message ids are unique across the
/// server, so `{mid}` is the id that message got.
@Suite struct AuthorizationMatrixTests {
    enum Route: String, CaseIterable, Sendable {
        case createConversation = "POST /v1/conversations"
        case readConversation = "GET /v1/conversations/{cid}"
        case readPages = "GET /v1/conversations/{cid}/messages"
        case append = "POST /v1/conversations/{cid}/messages"
        case edit = "PATCH /v1/conversations/{cid}/messages/{mid}"
        case delete = "DELETE /v1/conversations/{cid}/messages/{mid}"
        case readEvents = "GET /v1/conversations/{cid}/events"
        case readMembers = "GET /v1/conversations/{cid}/members"
        case putMember = "PUT /v1/conversations/{cid}/members/newbie"
        case removeMember = "DELETE /v1/conversations/{cid}/members/zed"
        case readOwnInbox = "GET /v1/users/me/conversations"
        case readOtherInbox = "GET /v1/users/zed/conversations"
        case readOwnInboxEvents = "GET /v1/users/me/events"
        case readOtherInboxEvents = "GET /v1/users/zed/events"
        case markOwnRead = "PUT /v1/conversations/{cid}/members/me/read"
        case markOtherRead = "PUT /v1/conversations/{cid}/members/zed/read"
        case unknownV1Path = "GET /v1/nothing-here"
        case metrics = "GET /metrics"
        case health = "GET /healthz"
    }

    enum Caller: String, CaseIterable, Sendable {
        case noToken, expired, badSignature, wrongAlg, algNone, unknownKid, wrongAudience
        /// HS256 over the ES256 key's public PEM, naming the ES256 kid: the
        /// classic confusion of a public key with a shared secret.
        case algConfusion
        case nonMember, member, owner, author, admin
    }

    /// Status and error code (nil for a success).
    struct Outcome: Equatable, CustomStringConvertible {
        var status: Int
        var code: String?
        var description: String { "\(status) \(code ?? "-")" }
    }

    static let missing = Outcome(status: 401, code: "missing_token")
    static let invalid = Outcome(status: 401, code: "invalid_token")
    static let expired = Outcome(status: 401, code: "token_expired")
    static let notFound = Outcome(status: 404, code: "conversation_not_found")
    static let forbidden = Outcome(status: 403, code: "forbidden")
    static let notAuthor = Outcome(status: 403, code: "not_author")
    static let memberNotFound = Outcome(status: 404, code: "member_not_found")
    static func ok(_ status: Int = 200) -> Outcome { Outcome(status: status, code: nil) }

    /// The table. Columns: the token problems share one answer per route,
    /// so they are spelled out once in `rejected`.
    static let table: [Route: [Caller: Outcome]] = {
        func row(_ nonMember: Outcome, member: Outcome, owner: Outcome, author: Outcome, admin: Outcome,
                 rejected: Bool = true) -> [Caller: Outcome] {
            [.noToken: rejected ? missing : ok(), .expired: rejected ? expired : ok(),
             .badSignature: rejected ? invalid : ok(), .wrongAlg: rejected ? invalid : ok(),
             .algNone: rejected ? invalid : ok(), .unknownKid: rejected ? invalid : ok(),
             .wrongAudience: rejected ? invalid : ok(), .algConfusion: rejected ? invalid : ok(),
             .nonMember: nonMember, .member: member, .owner: owner, .author: author, .admin: admin]
        }
        return [
            .createConversation: row(ok(201), member: ok(201), owner: ok(201), author: ok(201), admin: ok(201)),
            .readConversation: row(notFound, member: ok(), owner: ok(), author: ok(), admin: ok()),
            .readPages: row(notFound, member: ok(), owner: ok(), author: ok(), admin: ok()),
            .append: row(notFound, member: ok(201), owner: ok(201), author: ok(201), admin: ok(201)),
            .edit: row(notFound, member: notAuthor, owner: notAuthor, author: ok(), admin: ok()),
            .delete: row(notFound, member: notAuthor, owner: notAuthor, author: ok(), admin: ok()),
            .readEvents: row(notFound, member: ok(), owner: ok(), author: ok(), admin: ok()),
            .readMembers: row(notFound, member: ok(), owner: ok(), author: ok(), admin: ok()),
            .putMember: row(notFound, member: forbidden, owner: ok(201), author: forbidden, admin: ok(201)),
            .removeMember: row(notFound, member: forbidden, owner: ok(), author: forbidden, admin: ok()),
            // An admin's `me` is its own subject, a member of nothing.
            .readOwnInbox: row(ok(), member: ok(), owner: ok(), author: ok(), admin: ok()),
            .readOtherInbox: row(forbidden, member: forbidden, owner: forbidden, author: forbidden, admin: ok()),
            .readOwnInboxEvents: row(ok(), member: ok(), owner: ok(), author: ok(), admin: ok()),
            .readOtherInboxEvents: row(forbidden, member: forbidden, owner: forbidden, author: forbidden, admin: ok()),
            .markOwnRead: row(notFound, member: ok(), owner: ok(), author: ok(), admin: memberNotFound),
            .markOtherRead: row(notFound, member: forbidden, owner: forbidden, author: forbidden, admin: ok()),
            .unknownV1Path: row(Outcome(status: 404, code: "not_found"), member: Outcome(status: 404, code: "not_found"),
                                owner: Outcome(status: 404, code: "not_found"), author: Outcome(status: 404, code: "not_found"),
                                admin: Outcome(status: 404, code: "not_found")),
            .metrics: row(forbidden, member: forbidden, owner: forbidden, author: forbidden, admin: ok()),
            .health: row(ok(), member: ok(), owner: ok(), author: ok(), admin: ok(), rejected: false),
        ]
    }()

    @Test func everyCellIsInTheTable() {
        for route in Route.allCases {
            for caller in Caller.allCases {
                #expect(Self.table[route]?[caller] != nil, "no expectation for \(route.rawValue) × \(caller)")
            }
        }
    }

    static func authorization(_ caller: Caller, _ minter: TokenMinter) -> String? {
        let now = Int(Date().timeIntervalSince1970)
        switch caller {
        case .noToken: return nil
        case .expired:
            return minter.token(claims: "\"sub\":\"mia\",\"exp\":\(now - 3600),\"aud\":\"\(TokenMinter.audience)\"")
        case .badSignature:
            return minter.token(claims: TokenMinter.claims(subject: "mia"), secret: Array("another-secret-that-is-long-enough-000000".utf8))
        case .wrongAlg:
            // Signed with the ES256 key, naming the HS256 key's kid.
            return minter.token(alg: .es256, kid: TokenMinter.hs256KeyID, claims: TokenMinter.claims(subject: "mia"))
        case .algNone:
            return minter.token(alg: .none, claims: TokenMinter.claims(subject: "mia"))
        case .unknownKid:
            return minter.token(kid: "nobody-knows", claims: TokenMinter.claims(subject: "mia"))
        case .wrongAudience:
            return minter.token(claims: TokenMinter.claims(subject: "mia", audience: "another-service"))
        case .algConfusion:
            return minter.token(kid: TokenMinter.es256KeyID, claims: TokenMinter.claims(subject: "mia"),
                                secret: Array(minter.publicKeyPEM.utf8))
        case .nonMember: return minter.user("nick")
        case .member: return minter.user("mia")
        case .owner: return minter.userES256("olga")
        case .author: return minter.user("ari")
        case .admin: return minter.admin()
        }
    }

    static func subject(_ caller: Caller) -> String {
        switch caller {
        case .nonMember: "nick"
        case .owner: "olga"
        case .author: "ari"
        case .admin: "bot"
        default: "mia"
        }
    }

    @Test(arguments: Route.allCases)
    func route(_ route: Route) throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let admin = minter.admin()
            for (index, caller) in Caller.allCases.enumerated() {
                let cid = "m\(index)"
                expectSuccess(try client.call(.post, "/v1/conversations", token: admin, json: #"{"id":"\#(cid)"}"#))
                for (user, role) in [("olga", "owner"), ("mia", "member"), ("zed", "member"), ("ari", "member")] {
                    expectSuccess(try client.call(.put, "/v1/conversations/\(cid)/members/\(user)", token: admin,
                                                  json: #"{"role":"\#(role)"}"#))
                }
                let first = try client.call(.post, "/v1/conversations/\(cid)/messages", token: admin,
                                            json: #"{"sender":"ari","body":"first"}"#)
                expectSuccess(first)
                let mid = try first.decode(HistoryMessage.self).id

                let parts = route.rawValue.split(separator: " ", maxSplits: 1)
                let method = HTTPMethod(rawValue: String(parts[0]))
                let target = parts[1].replacingOccurrences(of: "{cid}", with: cid).replacingOccurrences(of: "{mid}", with: "\(mid)")
                let json: String? = switch route {
                case .createConversation: "{}"
                case .append: #"{"sender":"\#(Self.subject(caller))","body":"hello"}"#
                case .edit: #"{"body":"edited"}"#
                case .putMember: #"{"role":"member"}"#
                case .markOwnRead, .markOtherRead: #"{"last_read_id":\#(mid)}"#
                default: nil
                }
                let response = try client.call(method, target, token: Self.authorization(caller, minter), json: json)
                let seen = Outcome(status: response.status, code: response.status >= 400 ? response.errorCode : nil)
                let expected = Self.table[route]?[caller]
                #expect(seen == expected, "\(route.rawValue) as \(caller): \(response.bodyText)")
                if response.status == 401 {
                    let challenge = response.headers["WWW-Authenticate"] ?? ""
                    #expect(challenge.hasPrefix(#"Bearer realm="history""#), "\(challenge)")
                    #expect(challenge.contains(#"error="invalid_token""#) == (caller != .noToken), "\(challenge)")
                }
            }
        }
    }

    private func expectSuccess(_ response: HTTPClientResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect((200..<300).contains(response.status), "\(response.bodyText)", sourceLocation: sourceLocation)
    }
}
