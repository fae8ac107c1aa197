import HTTPCore
import HistoryStore

/// How requests are authenticated, chosen once at start.
///
/// - `open`: no key configured; every request acts as an administrator.
///   Safe only where nobody else can connect, so it needs a loopback bind
///   (or `--insecure-no-auth`, for a server behind something that
///   authenticates for it).
/// - `tokens`: every `/v1` request and `/metrics` need a bearer JWT.
public enum AccessMode: Sendable {
    case open
    case tokens(TokenVerifier)

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

    public var isOpen: Bool {
        if case .open = self { true } else { false }
    }

    /// 127.0.0.0/8, ::1 and `localhost`: addresses only this machine reaches.
    public static func isLoopback(host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { octet in
            !octet.isEmpty && octet.count <= 3 && octet.allSatisfy { $0.isASCII && $0.isNumber } && Int(octet)! <= 255
        }
    }

    /// `/v1` and everything under it, and `/metrics`, need a caller;
    /// `/healthz` and unknown paths outside `/v1` do not (the latter are
    /// 404 for everyone, and nothing behind them exists to protect). The
    /// first segment is compared percent-decoded, as the router compares
    /// it, so `/%761/...` cannot slip past; a segment that does not decode
    /// needs a caller too.
    static func needsCaller(path: Substring) -> Bool {
        guard path.first == "/" else { return true }
        let first = path.dropFirst().prefix { $0 != "/" }
        guard let decoded = QueryParameters.percentDecoded(first, plusIsSpace: false) else { return true }
        return decoded == "v1" || decoded == "metrics"
    }

    /// What authentication decided.
    enum Authentication {
        case caller(Caller)
        /// 401; `charge` is the client's read bucket after this request
        /// took from it (nil when reads are not limited).
        case refused(TokenRejection, charge: TokenBucket.Decision?)
        /// 429: the client's read bucket was empty, so the token was not checked.
        case throttled(TokenBucket.Decision)
    }

    /// Who is asking: the administrator in open mode, else the token's caller.
    ///
    /// A request whose authentication fails is charged to its client's read
    /// bucket (`charge`), and one that would need a signature check is
    /// charged before it (then given back, `refund`, when the token is
    /// valid): a flood of bad tokens costs a bucket lookup each once the
    /// bucket is empty, not a signature check each. A token verified before
    /// (cached) costs nothing here.
    func authenticate(_ request: HTTPRequest, charge: () -> TokenBucket.Decision?,
                      refund: () -> Void) -> Authentication {
        switch self {
        case .open:
            return .caller(.admin(subject: nil))
        case .tokens(let verifier):
            var decision: TokenBucket.Decision?
            var charged = false
            let values = request.headers.values(of: "Authorization")
            let result: Result<Caller, TokenRejection> = if values.count > 1 {
                .failure(.invalid("several Authorization fields"))
            } else {
                verifier.verify(authorization: values.first.map { Substring($0) }) {
                    charged = true
                    decision = charge()
                    return decision?.allowed ?? true
                }
            }
            switch result {
            case .success(let caller):
                if charged { refund() }
                return .caller(caller)
            case .failure(let rejection):
                if !charged { decision = charge() }
                if let decision, !decision.allowed { return .throttled(decision) }
                return .refused(rejection, charge: decision)
            }
        }
    }
}

/// Why the server cannot run in the access mode its settings ask for: one
/// line for stderr, exit status 2 like a bad flag.
public struct AccessSetupError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
