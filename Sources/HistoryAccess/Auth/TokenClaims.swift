import HistoryStore
import StrictJSON

/// The claims of a token whose signature has verified, type-checked.
///
/// Types are checked for every claim the server reads, also for those it was
/// not configured to compare (`aud`, `iss`): a token with `"exp": "soon"` or
/// `"aud": 5` is malformed whoever made it, and refusing it keeps a bug in
/// the minting backend from turning into a token that is silently accepted.
/// Claims the server does not read (`jti`, custom ones) are left alone.
///
/// Related specification: <https://www.rfc-editor.org/rfc/rfc7519#section-4.1>
struct TokenClaims {
    /// `sub`: the user id.
    let subject: UserID
    /// `exp`, in seconds since the epoch (NumericDate, fractions allowed).
    let expiresAt: Double
    /// `nbf`, when present.
    let notBefore: Double?
    /// `iat`, when present.
    let issuedAt: Double?
    /// `aud`, a single string made a one-element list; nil when absent.
    let audiences: [String]?
    /// `iss`, when present.
    let issuer: String?
    /// True when the space-separated `scope` string lists `admin` (RFC 8693 §4.2).
    let hasAdminScope: Bool

    /// Parses the decoded payload through the strict JSON reader.
    /// - Throws: `TokenRejection.invalid` naming the first claim that is
    ///   missing or of the wrong type (never its value).
    init(json: [UInt8]) throws(TokenRejection) {
        let value: JSONValue
        do {
            value = try JSONReader.parse(json)
        } catch {
            throw .invalid("the claims are not valid JSON (byte \(error.offset))")
        }
        guard case .object(let claims) = value else {
            throw .invalid("the claims are a JSON \(value.typeName), not an object")
        }

        guard let sub = claims["sub"] else { throw .invalid("no sub claim") }
        guard case .string(let subText) = sub else { throw .invalid("sub is a \(sub.typeName), not a string") }
        guard let subject = UserID(subText) else {
            throw .invalid("sub is not 1 to 64 characters of [A-Za-z0-9_.@-]")
        }
        self.subject = subject

        guard let expiresAt = try Self.numericDate(claims, "exp") else { throw .invalid("no exp claim") }
        self.expiresAt = expiresAt
        notBefore = try Self.numericDate(claims, "nbf")
        issuedAt = try Self.numericDate(claims, "iat")

        switch claims["aud"] {
        case nil:
            audiences = nil
        case .string(let audience)?:
            audiences = [audience]
        case .array(let elements)?:
            var audiences: [String] = []
            for element in elements {
                guard case .string(let audience) = element else {
                    throw .invalid("aud holds a \(element.typeName), not only strings")
                }
                audiences.append(audience)
            }
            self.audiences = audiences
        case let other?:
            throw .invalid("aud is a \(other.typeName), not a string or an array of strings")
        }

        switch claims["iss"] {
        case nil: issuer = nil
        case .string(let issuer)?: self.issuer = issuer
        case let other?: throw .invalid("iss is a \(other.typeName), not a string")
        }

        switch claims["scope"] {
        case nil: hasAdminScope = false
        case .string(let scope)?: hasAdminScope = scope.split(separator: " ").contains("admin")
        case let other?: throw .invalid("scope is a \(other.typeName), not a string")
        }
    }

    /// A NumericDate claim: nil when absent, else a finite JSON number.
    private static func numericDate(_ claims: [String: JSONValue], _ name: String) throws(TokenRejection) -> Double? {
        guard let value = claims[name] else { return nil }
        guard case .number(let number) = value else {
            throw .invalid("\(name) is a \(value.typeName), not a number")
        }
        let seconds = number.doubleValue
        guard seconds.isFinite else { throw .invalid("\(name) is not a finite number") }
        return seconds
    }
}
