// The doctor's "clientAddress" check (see DoctorCheckID). Not written yet: it answers skipped and says so,
// so a run shows every row while the checks land one by one.

/// Not written yet; answers skipped.
struct ClientAddressCheck: DoctorCheck {
    let id = DoctorCheckID.clientAddress

    func run(_ context: DoctorContext) async -> DoctorFinding {
        DoctorFinding(check: id, status: .skipped, seen: "This check is not written yet.")
    }
}
