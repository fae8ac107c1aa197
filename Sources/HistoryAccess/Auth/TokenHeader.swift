import StrictJSON

/// The JOSE header of a token: which algorithm and which key signed it.
///
/// Both are only claims by whoever made the token; the verifier uses `kid`
/// to pick a configured key and then requires `alg` to be that key's
/// algorithm, never the other way round.
///
/// Related specification: <https://www.rfc-editor.org/rfc/rfc7515#section-4.1>
struct TokenHeader: Equatable {
    let algorithm: String
    let keyID: String?

    /// Parses the decoded header through the strict JSON reader.
    /// - Throws: `TokenRejection.invalid` for invalid JSON, a non-object, a
    ///   missing or non-string `alg`, a non-string `kid` or `typ`, or any
    ///   `crit` (it lists extensions the verifier must understand; it
    ///   understands none, so RFC 7515 §4.1.11 requires refusing).
    init(json: [UInt8]) throws(TokenRejection) {
        let value: JSONValue
        do {
            value = try JSONReader.parse(json)
        } catch {
            throw .invalid("the header is not valid JSON (byte \(error.offset))")
        }
        guard case .object(let fields) = value else {
            throw .invalid("the header is a JSON \(value.typeName), not an object")
        }
        guard case .string(let algorithm)? = fields["alg"] else {
            throw .invalid(fields["alg"] == nil ? "the header has no alg" : "the header's alg is not a string")
        }
        switch fields["kid"] {
        case nil: keyID = nil
        case .string(let kid)?: keyID = kid
        case let other?: throw .invalid("the header's kid is a \(other.typeName), not a string")
        }
        if let typ = fields["typ"] {
            guard case .string = typ else { throw .invalid("the header's typ is a \(typ.typeName), not a string") }
        }
        if fields["crit"] != nil {
            throw .invalid("the header has crit extensions, none of which is supported")
        }
        self.algorithm = algorithm
    }
}
