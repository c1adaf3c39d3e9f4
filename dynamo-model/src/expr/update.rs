//! The clauses of an update expression, collected action by action and rendered as
//! DynamoDB reads them: `SET …, … REMOVE … ADD … DELETE …`. Every update the crate sends
//! (typed updates, migrations) is rendered here.

/// An update expression under construction; operands are placeholders (`#n0`, `:v0`, or an
/// expression over them) from the request's [`Placeholders`](super::Placeholders).
#[derive(Debug, Default)]
pub(crate) struct UpdateClauses {
    set: Vec<String>,
    remove: Vec<String>,
    add: Vec<String>,
    delete: Vec<String>,
}

impl UpdateClauses {
    /// `SET target = value`.
    pub(crate) fn set(&mut self, target: String, value: String) {
        self.set.push(format!("{target} = {value}"));
    }

    /// `REMOVE path`.
    pub(crate) fn remove(&mut self, path: String) {
        self.remove.push(path);
    }

    /// `ADD path value`.
    pub(crate) fn add(&mut self, path: String, value: String) {
        self.add.push(format!("{path} {value}"));
    }

    /// `DELETE path value`.
    pub(crate) fn delete(&mut self, path: String, value: String) {
        self.delete.push(format!("{path} {value}"));
    }

    /// How many actions were collected.
    pub(crate) fn len(&self) -> usize {
        self.set.len() + self.remove.len() + self.add.len() + self.delete.len()
    }

    /// The expression, its clauses in the order SET, REMOVE, ADD, DELETE; empty when no
    /// action was collected.
    pub(crate) fn render(self) -> String {
        let mut clauses = Vec::with_capacity(4);
        for (keyword, parts) in [
            ("SET", self.set),
            ("REMOVE", self.remove),
            ("ADD", self.add),
            ("DELETE", self.delete),
        ] {
            if !parts.is_empty() {
                clauses.push(format!("{keyword} {}", parts.join(", ")));
            }
        }
        clauses.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clauses_render_in_dynamodbs_order_and_empty_ones_are_left_out() {
        let mut u = UpdateClauses::default();
        assert_eq!(u.len(), 0);
        u.delete("#n3".into(), ":v2".into());
        u.set("#n0".into(), ":v0".into());
        u.remove("#n1".into());
        u.set("#n2".into(), "#n2 + :v1".into());
        assert_eq!(u.len(), 4);
        assert_eq!(
            u.render(),
            "SET #n0 = :v0, #n2 = #n2 + :v1 REMOVE #n1 DELETE #n3 :v2"
        );
        assert_eq!(UpdateClauses::default().render(), "");
    }
}
