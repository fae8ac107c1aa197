import Foundation
import HistoryStore
import HistoryTestSupport
import Testing
@testable import HistoryAccess

/// Tokens minted by an independent implementation, Python's PyJWT with
/// `cryptography`, so the verifier is not only tested against tokens it
/// could have made itself: what PyJWT signs correctly must verify, and what
/// it is made to forge must be refused.
@Suite("TokenInterop")
struct TokenInteropTests {
    /// Writes an HS256 secret file and an ES256 public key PEM into the
    /// folder, then prints one JSON object: token name -> compact token.
    static let mintScript = #"""
    import json, shutil, subprocess, sys
    try:
        import jwt
        from jwt.algorithms import ECAlgorithm, HMACAlgorithm
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec
    except ImportError as error:
        print("MISSING " + str(error))
        sys.exit(3)

    folder, now = sys.argv[1], int(sys.argv[2])
    secret = "interop-secret-that-is-long-enough-0123456789"
    with open(folder + "/secrets", "w") as f:
        f.write("# made by PyJWT's test\nk1 " + secret + "\n")
    key = ec.generate_private_key(ec.SECP256R1())
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    with open(folder + "/e1.pem", "wb") as f:
        f.write(public_pem)
    other = ec.generate_private_key(ec.SECP256R1())

    # A second ES256 key made the way an operator would, with openssl.
    if shutil.which("openssl") is None:
        print("MISSING openssl")
        sys.exit(3)
    subprocess.run(["openssl", "ecparam", "-genkey", "-name", "prime256v1", "-noout",
                    "-out", folder + "/e2-private.pem"], check=True)
    subprocess.run(["openssl", "ec", "-in", folder + "/e2-private.pem", "-pubout",
                    "-out", folder + "/e2.pem"], check=True, capture_output=True)
    with open(folder + "/e2-private.pem") as f:
        openssl_key = f.read()
    with open(folder + "/e2.pem", "rb") as f:
        openssl_public_pem = f.read()

    def b64(data):
        return jwt.utils.base64url_encode(data).decode()

    def raw(header, claims, sign):
        # Signs below PyJWT's checks, as a forger would.
        signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
        return signing_input + "." + b64(sign(signing_input.encode()))

    def hs256_raw(header, claims, key_bytes):
        return raw(header, claims, lambda data: HMACAlgorithm(HMACAlgorithm.SHA256).sign(data, key_bytes))

    user = {"sub": "ana", "exp": now + 300, "iat": now, "nbf": now - 5,
            "aud": ["other", "chat"], "iss": "app-backend"}
    admin = dict(user, sub="backend", scope="read admin")
    tokens = {
        "hs256": jwt.encode(user, secret, algorithm="HS256", headers={"kid": "k1"}),
        "hs256_admin": jwt.encode(admin, secret, algorithm="HS256", headers={"kid": "k1"}),
        "es256": jwt.encode(user, key, algorithm="ES256", headers={"kid": "e1"}),
        "es256_admin": jwt.encode(admin, key, algorithm="ES256", headers={"kid": "e1"}),
        "hs256_float_exp": jwt.encode(dict(user, exp=now + 300.25), secret, algorithm="HS256", headers={"kid": "k1"}),
        "es256_openssl": jwt.encode(user, openssl_key, algorithm="ES256", headers={"kid": "e2"}),
        "es256_openssl_as_e1": jwt.encode(user, openssl_key, algorithm="ES256", headers={"kid": "e1"}),
        "alg_confusion_openssl": hs256_raw({"alg": "HS256", "typ": "JWT", "kid": "e2"}, admin, openssl_public_pem),
        "es256_aud_string": jwt.encode(dict(user, aud="chat"), key, algorithm="ES256", headers={"kid": "e1"}),

        "expired": jwt.encode(dict(user, exp=now - 61), secret, algorithm="HS256", headers={"kid": "k1"}),
        "alg_none": jwt.encode(admin, None, algorithm="none", headers={"kid": "k1"}),
        "alg_none_no_kid": jwt.encode(admin, None, algorithm="none"),
        "alg_confusion": hs256_raw({"alg": "HS256", "typ": "JWT", "kid": "e1"}, admin, public_pem),
        "alg_confusion_stripped": hs256_raw({"alg": "HS256", "typ": "JWT", "kid": "e1"}, admin, public_pem.strip()),
        "hs512": jwt.encode(user, secret, algorithm="HS512", headers={"kid": "k1"}),
        "es384_header_on_es256_key": raw({"alg": "ES384", "kid": "e1"}, user,
                                         lambda data: ECAlgorithm(ECAlgorithm.SHA256).sign(data, key)),
        "es256_raw_control": raw({"alg": "ES256", "kid": "e1"}, user,
                                 lambda data: ECAlgorithm(ECAlgorithm.SHA256).sign(data, key)),
        "wrong_secret": jwt.encode(user, secret + "x", algorithm="HS256", headers={"kid": "k1"}),
        "wrong_ec_key": jwt.encode(user, other, algorithm="ES256", headers={"kid": "e1"}),
        "unknown_kid": jwt.encode(user, secret, algorithm="HS256", headers={"kid": "k9"}),
        "wrong_aud": jwt.encode(dict(user, aud="mail"), secret, algorithm="HS256", headers={"kid": "k1"}),
        "wrong_iss": jwt.encode(dict(user, iss="evil"), secret, algorithm="HS256", headers={"kid": "k1"}),
        "future_nbf": jwt.encode(dict(user, nbf=now + 61), secret, algorithm="HS256", headers={"kid": "k1"}),
        "no_exp": jwt.encode({k: v for k, v in user.items() if k != "exp"}, secret, algorithm="HS256", headers={"kid": "k1"}),
    }
    for name in ["hs256", "es256"]:
        header, payload, signature = tokens[name].split(".")
        forged = b64(json.dumps(admin).encode())
        tokens["tampered_" + name] = header + "." + forged + "." + signature
    print(json.dumps(tokens))
    """#

    @Test func pyJWTTokensVerifyAndItsForgeriesAreRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("token-interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let (status, output) = try Self.runPython(in: folder, arguments: [folder.path, String(TokenTestClock.start)])
        guard status == 0 else {
            if output.hasPrefix("MISSING") {
                Issue.record("\(output.trimmingCharacters(in: .whitespacesAndNewlines)): this test needs Python's PyJWT and cryptography (`pip install PyJWT cryptography`) and openssl")
            } else {
                Issue.record("the PyJWT minting script failed (exit \(status)): \(output)")
            }
            return
        }
        let tokens = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: String])

        let keys = try TokenKeys.load(hs256SecretFile: folder.appendingPathComponent("secrets").path,
                                      es256PublicKeys: [("e1", folder.appendingPathComponent("e1.pem").path),
                                                        ("e2", folder.appendingPathComponent("e2.pem").path)])
        let verifier = TokenVerifier(keys: keys, audience: "chat", issuer: "app-backend", clock: TokenTestClock().reader)
        func verify(_ name: String) throws -> Result<Caller, TokenRejection> {
            let token = try #require(tokens[name], "the script made no \(name) token")
            return verifier.verify(authorization: Substring("Bearer " + token))
        }

        let ana = Caller.user(UserID("ana")!)
        #expect(try verify("hs256") == .success(ana))
        #expect(try verify("es256") == .success(ana))
        #expect(try verify("hs256_admin") == .success(.admin(subject: "backend")))
        #expect(try verify("es256_admin") == .success(.admin(subject: "backend")))
        #expect(try verify("hs256_float_exp") == .success(ana))
        #expect(try verify("es256_aud_string") == .success(ana))
        #expect(try verify("es256_raw_control") == .success(ana))
        #expect(try verify("es256_openssl") == .success(ana))
        #expect(try verify("expired") == .failure(.expired))

        let forgeries = ["alg_none", "alg_none_no_kid", "alg_confusion", "alg_confusion_stripped", "hs512",
                         "es384_header_on_es256_key", "wrong_secret", "wrong_ec_key", "unknown_kid", "wrong_aud",
                         "wrong_iss", "future_nbf", "no_exp", "tampered_hs256", "tampered_es256",
                         "es256_openssl_as_e1", "alg_confusion_openssl"]
        for name in forgeries {
            let result = try verify(name)
            guard case .failure(.invalid) = result else {
                Issue.record("\(name): expected invalid_token, got \(result)")
                continue
            }
        }
        #expect(Set(tokens.keys) == Set(forgeries + ["hs256", "es256", "hs256_admin", "es256_admin", "hs256_float_exp",
                                                    "es256_aud_string", "es256_raw_control", "es256_openssl", "expired"]))
    }

    /// Runs the minting script with `python3` from PATH; returns its exit
    /// status and standard output, with standard error (kept in a file in
    /// `folder`, so neither pipe can fill up) appended when it failed.
    static func runPython(in folder: URL, arguments: [String]) throws -> (Int32, String) {
        let errorURL = folder.appendingPathComponent("python-stderr.txt")
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        let errorFile = try FileHandle(forWritingTo: errorURL)
        defer { try? errorFile.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", mintScript] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errorFile
        try process.runSerialized()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var text = String(decoding: outputData, as: UTF8.self)
        if process.terminationStatus != 0 {
            text += (try? String(contentsOf: errorURL, encoding: .utf8)) ?? ""
        }
        return (process.terminationStatus, text)
    }
}
