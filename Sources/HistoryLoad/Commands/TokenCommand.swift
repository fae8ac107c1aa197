import ArgumentParser

struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a token for a user (or an admin token) signed with the server's key: a development login.",
        discussion: """
            e.g. `history-load token --sub ana --jwt-secret-file secrets.txt`, then \
            `curl -H "Authorization: Bearer $TOKEN" ...`.
            """
    )

    @Option(help: "The user id the token names (`sub`): 1 to 64 characters of [A-Za-z0-9_.@-].")
    var sub: String

    @Flag(help: "A service token (`\"scope\":\"admin\"`): may do everything.")
    var admin = false

    @Option(help: "Seconds until it expires.")
    var ttl: Int = 3600

    @OptionGroup var keys: SigningKeyOptions

    func validate() throws {
        guard (1...64).contains(sub.utf8.count), sub.utf8.allSatisfy(Self.isUserIDByte) else {
            throw ValidationError("--sub must be 1 to 64 characters of [A-Za-z0-9_.@-].")
        }
        guard ttl >= 1 else { throw ValidationError("--ttl must be at least 1 second.") }
        guard !keys.isEmpty else { throw ValidationError("Give --jwt-secret-file or --jwt-es256-private-key.") }
        if let kid = keys.kid, keys.secretFile == nil { throw ValidationError("--kid \(kid) needs --jwt-secret-file.") }
    }

    func run() throws {
        do {
            guard let signer = try keys.signer() else { throw ValidationError("no key") }
            print(signer.token(subject: sub, admin: admin, lifetime: ttl, now: LoadCredentials.now()))
        } catch let error as TokenSetupError {
            throw ValidationError(error.description)
        }
    }

    static func isUserIDByte(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "@") || byte == UInt8(ascii: "-")
    }
}
