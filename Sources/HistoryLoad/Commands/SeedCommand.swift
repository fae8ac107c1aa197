import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

struct SeedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Fill a server (over HTTP) or a database (--direct: a SQLite file or postgres://...) with realistic conversations.",
        discussion: """
            One conversation takes 40% of the messages, the others follow a Zipf-like tail; bodies are \
            20 to 300 characters of words; about 10% are replies, 3% get edited and 1% deleted.
            """
    )

    @Option(help: "The server to fill, e.g. http://127.0.0.1:8080 (not with --direct).")
    var url: ServerEndpoint?

    @Option(help: "Bulk-load this SQLite file, or PostgreSQL database (postgres://...) with COPY, instead of HTTP (no server may be writing it).")
    var direct: String?

    @Option(help: "How many conversations.")
    var conversations: Int = 100

    @Option(help: "How many messages in all.")
    var messages: Int = 10_000

    @Option(help: "Keep-alive connections posting in parallel (HTTP only).")
    var parallel: Int = 8

    @Option(help: "Seed of the random choices: the same seed gives the same conversations.")
    var seed: UInt64 = 1

    @Option(help: "Prefix of the conversation ids.")
    var prefix: String = "load-"

    @Flag(help: "Make the --members users members of every conversation in open mode too (the users of `run --scenario inbox`); with keys they always are.")
    var addMembers = false

    @Flag(help: "No progress bar on stderr.")
    var quiet = false

    @OptionGroup(title: "Tokens mode")
    var tokens: TokenModeOptions

    func validate() throws {
        guard (url == nil) != (direct == nil) else { throw ValidationError("Give either --url or --direct, not both.") }
        guard conversations >= 1 else { throw ValidationError("Please specify at least 1 conversation.") }
        guard messages >= 0 else { throw ValidationError("--messages cannot be negative.") }
        guard (1...1024).contains(parallel) else { throw ValidationError("--parallel must be 1 to 1024.") }
        guard ConversationCatalog.conversationID(prefix: prefix, index: conversations - 1).count <= 64,
              prefix.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (48...57).contains($0)
                  || (65...90).contains($0) || (97...122).contains($0) })
        else { throw ValidationError("--prefix must be characters of [A-Za-z0-9_-] short enough for 64-character ids.") }
    }

    func run() throws {
        let plan = SeedPlan(conversations: conversations, messages: messages, seed: seed, prefix: prefix)
        let progress = SeedProgress(total: messages, enabled: !quiet)
        let start = MonotonicClock.now()
        progress.start()
        let outcome: HTTPSeeder.Outcome
        do {
            // With keys, the virtual users of `run` must be members to read;
            // the inbox scenario's users need memberships in open mode too.
            let credentials = try tokens.credentials()
            let members = credentials == nil && !addMembers ? [] : tokens.memberSubjects
            if let direct {
                outcome = try DirectSeeder.seed(plan, path: direct, progress: progress, members: members)
            } else {
                outcome = try HTTPSeeder.seed(plan, endpoint: url!, parallel: parallel, progress: progress,
                                              authorization: credentials?.adminAuthorization(), members: members)
            }
        } catch {
            progress.stop()
            throw error
        }
        progress.stop()
        let seconds = Double(MonotonicClock.now() - start) / 1e9
        print(Self.summary(outcome, plan: plan, seconds: seconds, target: direct ?? url!.description))
        if !outcome.failures.isEmpty { throw ExitCode(1) }
    }

    static func summary(_ outcome: HTTPSeeder.Outcome, plan: SeedPlan, seconds: Double, target: String) -> String {
        let sizes = plan.sizes()
        var lines = [
            "seeded \(target) in \(Format.fixed(seconds, 1)) s: "
                + "\(Format.grouped(outcome.messages)) messages (\(Format.fixed(Double(outcome.messages) / max(seconds, 0.001), 0))/s) "
                + "in \(outcome.conversationsCreated + outcome.conversationsExisting) conversations "
                + "(\(outcome.conversationsCreated) created, \(outcome.conversationsExisting) already there)",
            "  largest \(plan.conversationID(0)): \(Format.grouped(sizes.first ?? 0)) messages; smallest: \(Format.grouped(sizes.last ?? 0))",
            "  replies \(Format.grouped(outcome.replies)), edits \(Format.grouped(outcome.edits)), deletes \(Format.grouped(outcome.deletes))",
        ]
        if outcome.rateLimitWaits > 0 {
            lines.append("  rate-limited: waited out Retry-After \(Format.grouped(outcome.rateLimitWaits)) times (not failures)")
        }
        if outcome.membersAdded + outcome.membersExisting > 0 {
            lines.append("  members \(Format.grouped(outcome.membersAdded)) added, \(Format.grouped(outcome.membersExisting)) already there")
        }
        for (failure, count) in outcome.failures.sorted(by: { $0.value > $1.value }) {
            lines.append("  failed: \(count) × \(failure)")
        }
        return lines.joined(separator: "\n")
    }
}
