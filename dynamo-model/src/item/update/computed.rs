//! Values DynamoDB computes from the item's own attributes: `SET a = b + :x`,
//! `SET a = if_not_exists(b, :zero) - c`, `SET l = list_append(l, m)` (see
//! [`crate::expr::Computed`]).

use super::{Action, Update};
use crate::expr::{SetNode, SetValue, Term, UpdatablePath};
use crate::{Entity, Error, ValidationReason};

impl<E: Entity> Update<E> {
    /// `SET path = value`, where DynamoDB computes `value` when it applies the update: a
    /// copy of another attribute of the same type, `path.plus(..)`/`path.minus(..)` (one
    /// `+` or `-`, between values, attributes and computed values),
    /// [`if_not_exists`](crate::Path::if_not_exists) or
    /// [`list_append`](crate::expr::list_append). A plain value is set as
    /// [`set`](Update::set) sets it (on a field with rules, use `set`).
    ///
    /// DynamoDB computes the value without knowing the field's Rust type: a difference of
    /// unsigned fields that goes below zero, or a sum past an integer type's range, is
    /// stored and then refused when the item is read. Guard such a change with a
    /// condition (`f.stock.ge(1)` before `f.stock.minus(1)`). An absent attribute in a sum
    /// is an error DynamoDB reports, unlike `ADD`: wrap it in `if_not_exists(.., 0)`.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table, expr::list_append};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[dynamo(table = App, pk = "CART#{id}", sk = "CART")]
    /// struct Cart { id: String, subtotal: u64, shipping: Option<u64>, total: u64, log: Vec<String> }
    ///
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let f = Cart::fields();
    /// let input = db
    ///     .update(Cart::key("c1"))
    ///     .set_to(f.total, f.subtotal.plus(f.shipping.if_not_exists(0)))
    ///     .set_to(f.log, list_append(f.log, vec!["priced".to_owned()]))
    ///     .params()?;
    /// let expr = input.update_expression().unwrap_or_default();
    /// assert!(expr.contains(" + if_not_exists(#n"), "{expr}");
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn set_to<V, K>(
        mut self,
        path: impl UpdatablePath<E, V>,
        value: impl SetValue<E, V, K>,
    ) -> Self {
        let path = path.attribute();
        // A plain value is a plain SET (or the removal of an absent one), checked as `set`
        // checks it, except on a ruled field, whose rules need the typed value: there it
        // is refused as a computed value.
        let ruled = E::__RULED.contains(&path.top());
        self.actions.push(match value.__node(&path) {
            SetNode::Term(Term::Value(value)) if !ruled => Action::Set(path, value),
            SetNode::Term(Term::Absent(_)) if !ruled => Action::cleared(path),
            node => Action::Compute(path, node),
        });
        self
    }

    /// Refuses a computed value that reads a renamed field (its older names are not read)
    /// or that its target's rules, uniqueness or encryption cannot allow.
    pub(super) fn check_computed(&self) -> Result<(), Error> {
        for action in &self.actions {
            let Action::Compute(_, value) = action else {
                continue;
            };
            for read in value.reads() {
                let aliases = super::aliases_of::<E>(read);
                if !aliases.is_empty() {
                    return Err(Error::invalid(
                        E::ENTITY_TYPE,
                        ValidationReason::RenamedField,
                        format!(
                            "`{}` may still be stored under an older name: a value computed from it would not see that value; rewrite the items first",
                            read.top()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
