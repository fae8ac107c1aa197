/// A JWS in compact serialization split into its three parts, before any
/// trust: `BASE64URL(header) "." BASE64URL(payload) "." BASE64URL(signature)`.
///
/// Only the header is decoded here. The payload stays undecoded until its
/// signature has been checked, so claims from a forged token are never read.
///
/// Related specification: <https://www.rfc-editor.org/rfc/rfc7515#section-7.1>
struct CompactToken {
    let header: TokenHeader
    /// The bytes the signature covers: the first two parts as sent, with the dot.
    let signingInput: ArraySlice<UInt8>
    /// The second part, still base64url.
    let encodedPayload: ArraySlice<UInt8>
    let signature: [UInt8]

    /// Splits and decodes `token`.
    /// - Throws: `TokenRejection.invalid` when there are not exactly three
    ///   non-empty parts in strict base64url, or the header is not acceptable.
    init(_ token: [UInt8]) throws(TokenRejection) {
        let dot = UInt8(ascii: ".")
        guard let firstDot = token.firstIndex(of: dot),
              let secondDot = token[(firstDot + 1)...].firstIndex(of: dot),
              !token[(secondDot + 1)...].contains(dot)
        else {
            throw .invalid("not three dot-separated parts")
        }
        let encodedHeader = token[..<firstDot]
        encodedPayload = token[(firstDot + 1)..<secondDot]
        let encodedSignature = token[(secondDot + 1)...]
        guard !encodedHeader.isEmpty, !encodedPayload.isEmpty else {
            throw .invalid("an empty header or payload part")
        }
        guard !encodedSignature.isEmpty else {
            throw .invalid("no signature (unsecured tokens are not accepted)")
        }
        guard let headerBytes = Base64URL.decode(encodedHeader) else {
            throw .invalid("the header is not base64url")
        }
        guard let signature = Base64URL.decode(encodedSignature) else {
            throw .invalid("the signature is not base64url")
        }
        header = try TokenHeader(json: headerBytes)
        signingInput = token[..<secondDot]
        self.signature = signature
    }

    /// The payload bytes, decoded; call only after the signature verified.
    func decodedPayload() throws(TokenRejection) -> [UInt8] {
        guard let bytes = Base64URL.decode(encodedPayload) else {
            throw .invalid("the payload is not base64url")
        }
        return bytes
    }
}
