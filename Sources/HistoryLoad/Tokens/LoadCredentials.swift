import Foundation

/// The tokens of a run in tokens mode: one per virtual user, each with its
/// own subject, and an admin token for the tool's own bookkeeping
/// (discovering conversations, reading posts back, seeding).
///
/// Virtual user `i` signs as ``subject(ofUser:members:)``: the seeder made
/// `members` such users members of every conversation, so user `i` reads
/// what it picks. Up to `members` users the subjects are distinct; beyond,
/// they repeat (the membership a run can use is the one seeded).
struct LoadCredentials: Sendable {
    let signer: TokenSigner
    /// How many `load-user-NNNN` the seeder made members.
    let members: Int
    /// Seconds each minted token is valid: longer than any run.
    var lifetime = 24 * 3600
    /// Every virtual user gets an admin token: a tokens-mode server's
    /// baseline (verification without membership checks), used by `bench`
    /// for its rows that are not about user tokens.
    var usersAreAdmins = false

    static let subjectPrefix = "load-user-"

    static func subject(ofUser index: Int, members: Int) -> String {
        let digits = String(index % max(1, members))
        return subjectPrefix + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The `Authorization` value of virtual user `index`: minted once for
    /// the user and reused across its requests, as an app does.
    func userAuthorization(ofUser index: Int) -> String {
        "Bearer " + signer.token(subject: Self.subject(ofUser: index, members: members), admin: usersAreAdmins,
                                 lifetime: lifetime, now: Self.now())
    }

    /// An admin token's `Authorization` value.
    func adminAuthorization() -> String {
        "Bearer " + signer.token(subject: "history-load", admin: true, lifetime: lifetime, now: Self.now())
    }

    static func now() -> Int {
        Int(Date().timeIntervalSince1970)
    }
}
