import Foundation

/// Reading keys from the files the server's flags name.
extension TokenKeys {
    /// Key files are a few lines; anything bigger is the wrong file (and
    /// reading `/dev/zero` must not hang the start).
    static let maximumKeyFileBytes = 1 << 20

    /// Loads `--jwt-hs256-secret-file` and every `--jwt-es256-public-key KID=PATH`.
    ///
    /// The secret file is text, one key per line, `KID SECRET` separated by
    /// spaces or tabs; the secret is the field's bytes as written (at least
    /// 32); blank lines and lines starting with `#` are ignored. Each ES256
    /// file holds one PEM public key (`-----BEGIN PUBLIC KEY-----`).
    ///
    /// - Throws: `TokenKeyError` with one line naming the file and line.
    public static func load(hs256SecretFile: String?,
                            es256PublicKeys: [(kid: String, path: String)]) throws(TokenKeyError) -> TokenKeys {
        var keys = TokenKeys()
        if let hs256SecretFile {
            for line in try readHS256Secrets(path: hs256SecretFile) {
                try keys.addHS256(kid: line.kid, secret: line.secret, origin: "\(hs256SecretFile) line \(line.lineNumber)")
            }
        }
        for (kid, path) in es256PublicKeys {
            try checkKeyID(kid, origin: "--jwt-es256-public-key \(path)")
            let bytes = try readKeyFile(path, what: "ES256 public key file for key id \"\(kid)\"")
            guard let pem = String(validating: bytes, as: UTF8.self) else {
                throw TokenKeyError("\(path): not a PEM P-256 public key (the file is not text)")
            }
            try keys.addES256(kid: kid, pem: pem, origin: path)
        }
        return keys
    }

    /// The keys of an HS256 secret file, in file order, for tools that mint
    /// tokens with the same file the server verifies with.
    /// - Throws: `TokenKeyError` for an unreadable file, a malformed or short
    ///   line, or a file with no key at all.
    public static func readHS256Secrets(path: String) throws(TokenKeyError) -> [(kid: String, secret: [UInt8], lineNumber: Int)] {
        let bytes = try readKeyFile(path, what: "HS256 secret file")
        var secrets: [(kid: String, secret: [UInt8], lineNumber: Int)] = []
        var seen: Set<String> = []
        for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let lineNumber = index + 1
            let fields = line.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") })
            guard let first = fields.first, first.first != UInt8(ascii: "#") else { continue }
            guard fields.count == 2 else {
                throw TokenKeyError("\(path) line \(lineNumber): expected \"KID SECRET\" (two fields separated by spaces)")
            }
            let kid = String(decoding: first, as: UTF8.self)
            try checkKeyID(kid, origin: "\(path) line \(lineNumber)")
            let secret = Array(fields[1])
            guard secret.count >= minimumSecretBytes else {
                throw TokenKeyError("\(path) line \(lineNumber): the secret of key id \"\(kid)\" is \(secret.count) bytes; at least \(minimumSecretBytes) are required")
            }
            guard seen.insert(kid).inserted else {
                throw TokenKeyError("\(path) line \(lineNumber): key id \"\(kid)\" is configured twice")
            }
            secrets.append((kid, secret, lineNumber))
        }
        guard !secrets.isEmpty else {
            throw TokenKeyError("\(path): no key (expected lines \"KID SECRET\")")
        }
        return secrets
    }

    /// The warning for a secret file others than its owner may read (any
    /// group or other permission bit): the server still uses it, since
    /// refusing would stop a running deployment at its next restart, but
    /// says so at start. Only the HS256 file holds a secret; an ES256 file
    /// holds a public key, which anyone may read. nil when the mode is
    /// 0600 or tighter, or cannot be read.
    public static func permissionWarning(hs256SecretFile path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 != 0 else { return nil }
        return "the HS256 secret file \(path) may be read by its group or others (mode "
            + String(mode, radix: 8) + "): anyone who reads it can sign tokens; chmod 600 it"
    }

    private static func readKeyFile(_ path: String, what: String) throws(TokenKeyError) -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw TokenKeyError("\(what) \(path) does not exist")
        }
        guard !isDirectory.boolValue else {
            throw TokenKeyError("\(what) \(path) is a directory")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw TokenKeyError("\(what) \(path) cannot be read (permission denied?)")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maximumKeyFileBytes + 1) ?? Data()
        } catch {
            throw TokenKeyError("\(what) \(path) cannot be read")
        }
        guard data.count <= maximumKeyFileBytes else {
            throw TokenKeyError("\(what) \(path) is larger than \(maximumKeyFileBytes) bytes")
        }
        return Array(data)
    }
}
