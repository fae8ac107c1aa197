import HistoryClient
import SwiftUI

/// One row of the model: a message, a pending send, a loader, the unread
/// divider, or who is typing.
struct RowView: View {
    let row: ChatRow
    let onRetry: (String) -> Void
    let onReplyTap: (Int64) -> Void

    var body: some View {
        switch row {
        case .loadingOlder, .loadingNewer:
            ProgressView().frame(maxWidth: .infinity).padding()
        case .unreadDivider:
            Label("New messages", systemImage: "arrow.down")
                .font(.caption).foregroundStyle(.orange).frame(maxWidth: .infinity).padding(.vertical, 4)
        case .message(let message):
            VStack(alignment: .leading, spacing: 2) {
                if let original = message.replyTo {
                    Button("In reply to #\(original)") { onReplyTap(original) }.font(.caption)
                }
                Text(message.sender).font(.caption).foregroundStyle(.secondary)
                Text(message.deleted ? "Message deleted" : message.body)
                    .italic(message.deleted)
                if message.editedAt != nil, !message.deleted {
                    Text("edited").font(.caption2).foregroundStyle(.secondary)
                }
            }
            .padding(.horizontal).padding(.vertical, 6)
        case .pending(let pending):
            HStack {
                Text(pending.body).foregroundStyle(.secondary)
                Spacer()
                switch pending.state {
                case .sending:
                    ProgressView().controlSize(.small)
                case .failed(let reason):
                    Button("Retry") { onRetry(pending.clientID) }.help(reason)
                }
            }
            .padding(.horizontal).padding(.vertical, 6)
        case .typing(let users):
            // The feed's typing list without this user: `model.typingUsers`.
            Text(users.count == 1 ? "\(users[0]) is typing…" : "\(users.joined(separator: ", ")) are typing…")
                .font(.caption).foregroundStyle(.secondary).padding(.horizontal).padding(.vertical, 4)
        }
    }
}

struct JumpToLatestButton: View {
    let count: Int
    let action: () -> Void

    var body: some View {
        Button(action: action) {
            Label(count > 0 ? "\(count) new" : "Latest", systemImage: "chevron.down")
        }
        .buttonStyle(.borderedProminent)
    }
}

struct Composer: View {
    @Binding var draft: String
    let send: () -> Void

    var body: some View {
        HStack {
            TextField("Message", text: $draft).textFieldStyle(.roundedBorder).onSubmit(send)
            Button("Send", action: send).disabled(draft.trimmingCharacters(in: .whitespaces).isEmpty)
        }
        .padding()
    }
}
