import ArgumentParser

/// `--jwt-es256-private-key KID=PATH`: the key id the server knows the
/// matching public key by, and the PEM file of the private key.
struct PrivateKeyArgument: ExpressibleByArgument, Hashable, Sendable {
    var kid: String
    var path: String

    init(kid: String, path: String) {
        self.kid = kid
        self.path = path
    }

    init?(argument: String) {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex,
              argument.index(after: equals) != argument.endIndex else { return nil }
        self.init(kid: String(argument[..<equals]), path: String(argument[argument.index(after: equals)...]))
    }
}
