import ArgumentParser

/// The signing keys of tokens mode, shared by `run`, `seed`, `bench` and
/// `token`: the same files the server verifies with (the HS256 secret file
/// is the server's own; for ES256 the private half of a key it knows).
struct SigningKeyOptions: ParsableArguments {
    @Option(name: .customLong("jwt-secret-file"),
            help: ArgumentHelp("Mint HS256 tokens with this file of `KID SECRET` lines (the server's --jwt-hs256-secret-file).",
                               valueName: "path"))
    var secretFile: String?

    @Option(name: .customLong("jwt-es256-private-key"),
            help: ArgumentHelp("Mint ES256 tokens with this PEM private key, known to the server by KID.", valueName: "kid=path"))
    var es256PrivateKey: PrivateKeyArgument?

    @Option(help: "The key id of the secret file to sign with (default: its first line).")
    var kid: String?

    var isEmpty: Bool { secretFile == nil && es256PrivateKey == nil }

    /// The HS256 signer when a secret file is given.
    func hs256Signer() throws(TokenSetupError) -> TokenSigner? {
        try secretFile.map { path throws(TokenSetupError) in try SigningKeyFiles.hs256Signer(path: path, kid: kid) }
    }

    /// The ES256 signer when a private key is given.
    func es256Signer() throws(TokenSetupError) -> TokenSigner? {
        try es256PrivateKey.map { key throws(TokenSetupError) in try SigningKeyFiles.es256Signer(key) }
    }

    /// The one signer of `run` and `seed`: HS256 when both are given.
    func signer() throws(TokenSetupError) -> TokenSigner? {
        if let signer = try hs256Signer() { return signer }
        return try es256Signer()
    }
}

/// Tokens mode of `run`, `seed` and `bench`: the keys, and how many
/// `load-user-NNNN` users the seeder makes members of every conversation.
struct TokenModeOptions: ParsableArguments {
    @OptionGroup var keys: SigningKeyOptions

    @Option(help: "With keys (or `seed --add-members`): users load-user-0000... that `seed` makes members of every conversation; virtual user i of `run` signs as (inbox: acts as) user i mod this.")
    var members: Int = 64

    func validate() throws {
        guard (1...10_000).contains(members) else { throw ValidationError("--members must be 1 to 10000.") }
        if let kid = keys.kid, keys.secretFile == nil { throw ValidationError("--kid \(kid) needs --jwt-secret-file.") }
    }

    /// The run's credentials, nil in open mode.
    func credentials() throws(TokenSetupError) -> LoadCredentials? {
        try keys.signer().map { LoadCredentials(signer: $0, members: members) }
    }

    /// The subjects the seeder makes members.
    var memberSubjects: [String] {
        (0..<members).map { LoadCredentials.subject(ofUser: $0, members: members) }
    }
}
