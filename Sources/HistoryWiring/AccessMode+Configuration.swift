import HistoryAccess

extension AccessMode {
    /// Loads the configured keys and checks the bind.
    /// - Throws: `AccessSetupError` (exit status 2) when a key cannot be
    ///   loaded, or when a non-loopback bind would run without keys.
    public init(_ configuration: ServerConfiguration) throws(AccessSetupError) {
        let keys: TokenKeys
        do {
            keys = try TokenKeys.load(hs256SecretFile: configuration.jwtHS256SecretFile,
                                      es256PublicKeys: configuration.jwtES256PublicKeys.map { (kid: $0.kid, path: $0.path) })
        } catch {
            throw AccessSetupError(error.message)
        }
        guard keys.isEmpty else {
            self = .tokens(TokenVerifier(keys: keys, audience: configuration.jwtAudience, issuer: configuration.jwtIssuer))
            return
        }
        guard Self.isLoopback(host: configuration.host) || configuration.insecureNoAuth else {
            throw AccessSetupError("--host \(configuration.host) is not a loopback address and no token key is given: "
                                     + "give --jwt-hs256-secret-file or --jwt-es256-public-key (or --insecure-no-auth)")
        }
        self = .open
    }
}
