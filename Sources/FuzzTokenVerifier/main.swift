@preconcurrency import Crypto
import Foundation
import FuzzSupport
import HistoryAccess
import StrictJSON

// Fuzzes `TokenVerifier`, which reads every bearer token, with a fixed key
// set (one HS256 secret, one ES256 public key) and a fixed clock.
//
// An input starting with `{` is a header and a payload, one JSON text each,
// separated by the first newline: the target signs them with the key the
// header's `alg` most likely wants (so the fuzzer explores the checks past
// the signature). Any other input is a compact token as a client sends it.
//
// Properties, beyond "no trap":
// - verifying the same token again (now from the cache) and with a
//   verifier that has no cache gives the same answer;
// - `Authorization: Bearer <token>` and the bare token give the same answer
//   (caller or error code);
// - a token that passes is signed by a configured key under its algorithm,
//   has a string `sub` and a numeric `exp` not past, names the audience and
//   issuer, and stops passing when a bit of its signature flips;
// - an unsigned input (random bytes, a test's token with no valid
//   signature under these keys) never passes.

let now: Double = 1_750_000_000
let hs256Secret = Array("fuzzing-secret-0123456789abcdef-0123456789".utf8)
/// Immutable, and libFuzzer calls the target from one thread; `Crypto` 3
/// just does not mark its key types `Sendable`.
nonisolated(unsafe) let es256PrivateKey = try! P256.Signing.PrivateKey(rawRepresentation: (1...32).map { UInt8($0) })
let keys = try! TokenKeys(hs256Secrets: [(kid: "hs", secret: hs256Secret)],
                          es256PublicKeyPEMs: [(kid: "es", pem: es256PrivateKey.publicKey.pemRepresentation)])

func makeVerifier(cacheCapacity: Int) -> TokenVerifier {
    TokenVerifier(keys: keys, audience: "chat", issuer: "https://issuer.test", leeway: .seconds(60),
                  clock: { now }, cacheCapacity: cacheCapacity)
}

let cachedVerifier = makeVerifier(cacheCapacity: 64)
let uncachedVerifier = makeVerifier(cacheCapacity: 0)

/// Foundation's base64, then the URL alphabet byte by byte: three
/// `replacingOccurrences` took a third of the target's time.
func base64URL(_ bytes: some Sequence<UInt8>) -> String {
    let base64 = Data(bytes).base64EncodedData()
    var url: [UInt8] = []
    url.reserveCapacity(base64.count)
    for byte in base64 {
        switch byte {
        case UInt8(ascii: "+"): url.append(UInt8(ascii: "-"))
        case UInt8(ascii: "/"): url.append(UInt8(ascii: "_"))
        case UInt8(ascii: "="): break
        default: url.append(byte)
        }
    }
    return String(decoding: url, as: UTF8.self)
}

func base64URLDecoded(_ text: Substring) -> [UInt8]? {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    return Data(base64Encoded: base64).map(Array.init)
}

/// The checks a passing token must have passed, redone independently.
func checkPassed(_ token: String, caller: Caller) {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    fuzzCheck(parts.count == 3, "a token of \(parts.count) parts passed")
    guard parts.count == 3, let headerBytes = base64URLDecoded(parts[0]), let payloadBytes = base64URLDecoded(parts[1]),
          let signature = base64URLDecoded(parts[2]),
          case .object(let header)? = try? JSONReader.parse(headerBytes),
          case .object(let claims)? = try? JSONReader.parse(payloadBytes) else {
        fuzzCheck(false, "a token whose parts do not decode to two JSON objects passed: \(token)")
        return
    }
    let signingInput = Array("\(parts[0]).\(parts[1])".utf8)
    switch header["alg"] {
    case .string("HS256"):
        let code = HMAC<SHA256>.authenticationCode(for: signingInput, using: SymmetricKey(data: hs256Secret))
        fuzzCheck(Array(code) == signature && header["kid"] != .string("es"), "an HS256 token passed without our HMAC")
    case .string("ES256"):
        let valid = (try? P256.Signing.ECDSASignature(rawRepresentation: signature))
            .map { es256PrivateKey.publicKey.isValidSignature($0, for: signingInput) } ?? false
        fuzzCheck(valid && header["kid"] == .string("es"), "an ES256 token passed without a valid signature")
    default:
        fuzzCheck(false, "a token with alg \(String(describing: header["alg"])) passed")
    }
    guard case .string(let subject)? = claims["sub"], case .number(let exp)? = claims["exp"] else {
        fuzzCheck(false, "a token without a string sub and a numeric exp passed")
        return
    }
    fuzzCheck(caller.subject == subject, "the caller is \(caller), the sub \(subject)")
    fuzzCheck(now < exp.doubleValue + 60, "an expired token passed (exp \(exp))")
    switch claims["aud"] {
    case .string("chat"): break
    case .array(let audiences): fuzzCheck(audiences.contains(.string("chat")), "aud \(audiences) passed")
    default: fuzzCheck(false, "aud \(String(describing: claims["aud"])) passed")
    }
    fuzzCheck(claims["iss"] == .string("https://issuer.test"), "iss \(String(describing: claims["iss"])) passed")

    // One flipped bit of the signature must undo it.
    var tampered = signature
    tampered[tampered.count / 2] ^= 0x01
    let tamperedToken = "\(parts[0]).\(parts[1]).\(base64URL(tampered))"
    if case .success = uncachedVerifier.verify(token: tamperedToken[...]) {
        fuzzCheck(false, "a token with a flipped signature bit passed")
    }
}

/// What a client is told: who it is, or the contract's error code.
func answer(_ result: Result<Caller, TokenRejection>) -> String {
    switch result {
    case .success(let caller): "\(caller)"
    case .failure(let rejection): rejection.code
    }
}

func verify(_ token: String, signed: Bool) {
    let first = cachedVerifier.verify(token: token[...])
    let again = cachedVerifier.verify(token: token[...])
    let uncached = uncachedVerifier.verify(token: token[...])
    fuzzCheck(first == again && first == uncached, "cached \(first), again \(again), uncached \(uncached)")
    if !token.isEmpty && !token.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) {
        // The same answer for the client: the same caller, or the same
        // error code. The logged reason may differ: the header's optional
        // whitespace is trimmed by Character, so "Bearer " before a
        // combining mark keeps its space and is refused for that.
        let header = uncachedVerifier.verify(authorization: "Bearer \(token)"[...])
        fuzzCheck(answer(header) == answer(first), "as a header \(header), as a token \(first)")
    }
    if case .success(let caller) = first {
        fuzzCheck(signed, "an input that was not signed here passed: \(token)")
        checkPassed(token, caller: caller)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = LibFuzzer.bytes(data, size)
    guard bytes.first == UInt8(ascii: "{") else {
        verify(String(decoding: bytes, as: UTF8.self), signed: false)
        return 0
    }
    let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
    let header = bytes[..<newline]
    let payload = newline < bytes.endIndex ? bytes[(newline + 1)...] : []
    let signingInput = "\(base64URL(header)).\(base64URL(payload))"
    let wantsES256 = String(decoding: header, as: UTF8.self).contains("ES256")
    let signature: [UInt8]
    if wantsES256, let ecdsa = try? es256PrivateKey.signature(for: Array(signingInput.utf8)) {
        signature = Array(ecdsa.rawRepresentation)
    } else {
        signature = Array(HMAC<SHA256>.authenticationCode(for: Array(signingInput.utf8), using: SymmetricKey(data: hs256Secret)))
    }
    verify("\(signingInput).\(base64URL(signature))", signed: true)
    return 0
}

LibFuzzer.run(testOneInput)
