//! The index keys an entity writes with its item: each index's position in the table,
//! the rendering of its templates from the item's fields, the write, and the descriptor
//! updates use to re-render a key whose fields they change.

use super::key::{key_template_const, render_call, Source};
use super::{
    bucket_type, delimiter_expr, dm, field, formatted_attr_type, key_type, position_const, private,
};
use crate::check::{EntityModel, Field, IndexModel};
use crate::names::index_name_type;
use crate::template::{Function, Segment, Template};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

/// The key attributes of an index with key templates (`Option<&str>` expressions, `None`
/// where the table's own key is written).
pub(super) struct IndexAttributes {
    pub pk: TokenStream,
    pub sk: TokenStream,
}

/// A template's segments as the runtime reads keys back (`KeySource`, `IndexKeySource`,
/// `TemplateField::Key`): each literal, and `None` for each placeholder.
fn literal_parts(t: &Template) -> TokenStream {
    let parts = t.segments.iter().map(|s| match s {
        Segment::Lit(l) => quote!(Some(#l)),
        Segment::Field(_) | Segment::Computed(_) => quote!(None),
    });
    quote!(&[#(#parts),*])
}

/// The name of the `KeyTemplate` constant of index `n`'s pk or sk template.
pub(super) fn index_template_const(n: usize, sort: bool) -> Ident {
    format_ident!("__INDEX_{}_{}_TEMPLATE", n, if sort { "SK" } else { "PK" })
}

/// The delimiter of an index's templates: `__DELIMITER` (the entity's) when the index
/// declares the same.
pub(super) fn index_delimiter(m: &EntityModel, index: &IndexModel) -> TokenStream {
    if index.delimiter == m.delimiter {
        quote!(__DELIMITER)
    } else {
        delimiter_expr(index.delimiter, &m.table)
    }
}

/// Every key template as a runtime `KeyTemplate`, each defined once in the entity's const
/// block (`__PK_TEMPLATE`, `__SK_TEMPLATE`, `__INDEX_{n}_PK_TEMPLATE`, ..): its text, its
/// literal parts, each placeholder's name and kind; and the delimiter of its primary-key
/// templates (`__DELIMITER`). Rendering, recognising, updates and exports all read it.
pub(super) fn template_consts(m: &EntityModel) -> TokenStream {
    let key = quote!(__DELIMITER);
    let primary = std::iter::once((key_template_const(false), false, &m.pk, key.clone(), true))
        .chain(
            m.sk.as_ref()
                .map(|s| (key_template_const(true), true, s, key.clone(), true)),
        );
    let indexes = m
        .indexes
        .iter()
        .enumerate()
        .filter(|(_, i)| i.attributes.is_none() && !i.inverted)
        .flat_map(|(n, i)| {
            let d = index_delimiter(m, i);
            let pk =
                i.pk.as_ref()
                    .map(|t| (index_template_const(n, false), false, t, d.clone(), false));
            pk.into_iter().chain(
                i.sk.as_ref()
                    .map(|t| (index_template_const(n, true), true, t, d.clone(), false)),
            )
        });
    let template = quote!(__p::KeyTemplate);
    let consts = primary
        .chain(indexes)
        .map(|(name, sort, (t, lit), delimiter, primary)| {
            let parts = literal_parts(t);
            let placeholders = placeholders(m, t, primary);
            quote!(const #name: #template = #template::of(#sort, #lit, #parts, &[#(#placeholders),*], #delimiter);)
        });
    let delimiter = delimiter_expr(m.delimiter, &m.table);
    quote! {
        const __DELIMITER: __dm::key::Delimiter = #delimiter;
        #(#consts)*
    }
}

/// Each placeholder of a template, named by its field's attribute: in a primary-key
/// template, with the check of its component (which recognises the entity's keys); in an
/// index template, with what an update computes from its field.
fn placeholders(m: &EntityModel, t: &Template, primary: bool) -> Vec<TokenStream> {
    let private = private();
    let placeholder = quote!(#private::TemplatePlaceholder);
    t.segments
        .iter()
        .filter_map(|segment| {
            let (source, function) = match segment {
                Segment::Lit(_) => return None,
                Segment::Field(name) => (field(m, name), None),
                Segment::Computed(c) => (field(m, &c.field), Some(c.function)),
            };
            let name = &source.name;
            let ty = &source.ty;
            Some(match (primary, function) {
                (true, None) => {
                    let kty = key_type(source, false);
                    // The same trait path as the key rendering, so a field type that is
                    // not a `KeyPart` is reported once.
                    quote_spanned!(ty.span()=> #placeholder::key(#name, <#kty as #private::KeyPart>::__accepts))
                }
                // Any shard or bucket: which one the item's fields give is checked when
                // the item is decoded (`verify_keys`).
                (true, Some(Function::Shard(n) | Function::Random(n))) => {
                    quote!(#placeholder::key(#name, #private::accepts_shard::<#n>))
                }
                (true, Some(Function::Bucket(b))) => {
                    let bucket = bucket_type(b);
                    quote!(#placeholder::key(#name, #private::accepts_bucket::<#bucket>))
                }
                (false, None) => quote!(#placeholder::field(#name)),
                (false, Some(function)) => {
                    let part = match function {
                        Function::Shard(n) => quote!(#private::ComputedPart::Shard(#n)),
                        Function::Random(n) => quote!(#private::ComputedPart::Random(#n)),
                        Function::Bucket(b) => {
                            let bucket = bucket_type(b);
                            quote_spanned! {ty.span()=>
                                #private::ComputedPart::Bucket(
                                    #private::bucket_from_component::<<#ty as #private::OptionalKeyPart>::Part, #bucket>
                                )
                            }
                        }
                    };
                    quote!(#placeholder::computed(#name, #part))
                }
            })
        })
        .collect()
}

/// The code for every index the entity declares.
#[derive(Default)]
pub(super) struct IndexCode {
    /// The entity's hidden constants holding each index's position in the table.
    pub positions: Vec<TokenStream>,
    /// `__INDEX_{n}`: each index's schema, for the assertions.
    pub consts: Vec<TokenStream>,
    /// `__render_index_key`'s match arms.
    pub renders: Vec<TokenStream>,
    /// `__INDEX_KEYS`' entries.
    pub keys: Vec<TokenStream>,
    /// `__INDEX_TEMPLATES`' entries.
    pub updates: Vec<TokenStream>,
    /// Per index (by declaration), its attributes when it has key templates.
    pub attributes: Vec<Option<IndexAttributes>>,
}

/// The local names of the rendered index keys in `__render_index_key`.
pub(super) fn index_outs() -> (Ident, Ident) {
    (format_ident!("__ipk"), format_ident!("__isk"))
}

pub(super) fn index_code(m: &EntityModel) -> IndexCode {
    let mut code = IndexCode::default();
    for (n, index) in m.indexes.iter().enumerate() {
        let (position, schema) = index_position(m, n, index);
        code.positions.push(position);
        code.consts.push(schema);
        // A multi-attribute key's attributes are the fields themselves, an inverted index's
        // keys the table's own: nothing to render, write or update.
        if index.attributes.is_some() || index.inverted {
            code.attributes.push(None);
            continue;
        }
        let attributes = template_attributes(m, n, index);
        template_index(m, n, index, &attributes, &mut code);
        code.attributes.push(Some(attributes));
    }
    code
}

/// The index's position, resolved once (a missing index fails here, with the message):
/// its key space type and the assertions both use it; and its schema constant.
fn index_position(m: &EntityModel, n: usize, index: &IndexModel) -> (TokenStream, TokenStream) {
    let (ident, table) = (&m.ident, &m.table);
    let dm = dm();
    let span = index.index.span();
    let name_type = index_name_type(index.index.name(), span);
    // The table's path at the index name too: an undeclared name is reported there.
    let table_at_name: TokenStream = table
        .to_token_stream()
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect();
    let idx = format_ident!("__INDEX_{}", n);
    let position = position_const(n);
    (
        // Outside the entity's `const` block. A name the table does not declare fails
        // here, at the index's name in the attribute (`DeclaresIndex`'s message).
        quote_spanned! {span=>
            #[doc(hidden)]
            const #position: usize =
                <#table_at_name as ::dynamo_model::__private::DeclaresIndex<#name_type>>::POSITION;
        },
        quote_spanned! {span=>
            const #idx: &#dm::schema::IndexSchema = &__SCHEMA_REF.indexes[#ident::#position];
        },
    )
}

/// Whether each template of the index writes the table's own key attribute (a const
/// `bool` expression): a template that repeats the entity's own key template, for an index
/// key attribute that is the table's own key attribute (e.g. a GSI sorted by the table's
/// `SK`). The primary key writes it, so the index neither writes nor removes it.
pub(super) fn own_keys(
    m: &EntityModel,
    index: &IndexModel,
    idx: &Ident,
) -> (TokenStream, TokenStream) {
    let dm = dm();
    let repeats = |index_t: Option<&(Template, LitStr)>, own: Option<&(Template, LitStr)>| {
        matches!((index_t, own), (Some(a), Some(b)) if a.1.value() == b.1.value())
            && index.delimiter == m.delimiter
    };
    let own_pk = if index.pk.is_some() && repeats(index.pk.as_ref(), Some(&m.pk)) {
        quote!(#dm::schema::same_attribute(#idx.pk_name(), Some(__SCHEMA.pk.name)))
    } else {
        quote!(false)
    };
    let own_sk = if index.sk.is_some() && repeats(index.sk.as_ref(), m.sk.as_ref()) {
        quote!(#dm::schema::same_attribute(#idx.sk_name(), __SCHEMA.sk_name()))
    } else {
        quote!(false)
    };
    (own_pk, own_sk)
}

/// The key attributes an index with templates writes.
fn template_attributes(m: &EntityModel, n: usize, index: &IndexModel) -> IndexAttributes {
    let idx = format_ident!("__INDEX_{}", n);
    let (own_pk, own_sk) = own_keys(m, index, &idx);
    // Written unless the template repeats the table's own key: `own` is then a const
    // expression, else `false`. (`None` from the index when the table declares no such
    // key attribute: the assertions report it, nothing else fails.)
    let attribute = |present: bool, own: &TokenStream, name: Ident| {
        if !present {
            quote!(None)
        } else if own.to_string() == "false" {
            quote!(#idx.#name())
        } else {
            quote!(if #own { None } else { #idx.#name() })
        }
    };
    let pk = attribute(index.pk.is_some(), &own_pk, format_ident!("pk_name"));
    let sk = attribute(index.sk.is_some(), &own_sk, format_ident!("sk_name"));
    IndexAttributes { pk, sk }
}

/// An index with key templates: its rendering (once, by `__render_index_key`: for
/// writing the item and for checking a decoded item against its stored index keys) and
/// its update descriptor.
fn template_index(
    m: &EntityModel,
    n: usize,
    index: &IndexModel,
    attributes: &IndexAttributes,
    code: &mut IndexCode,
) {
    let private = private();
    let index_name = index.index.to_string();
    let (ipk, isk) = index_outs();
    let (pk_attr, sk_attr) = (&attributes.pk, &attributes.sk);
    let render = |t: &Option<(Template, LitStr)>, sort, out| {
        let t = &t.as_ref()?.0;
        Some(render_call(
            m,
            (&index_template_const(n, sort), t),
            Source::IndexItem,
            out,
        ))
    };
    // Both keys, the sort key only when the partition key is present: `&&`.
    let renders = [
        render(&index.pk, false, &ipk),
        render(&index.sk, true, &isk),
    ];
    let renders = renders.iter().flatten();
    let position = code.keys.len();
    code.keys
        .push(quote!(#private::IndexKeyAttributes::new(#index_name, #pk_attr, #sk_attr)));
    code.renders.push(quote! {
        #position => Ok(#(#renders?)&&*),
    });
    code.updates.extend(update_template(m, n, index, position));
}

/// The descriptor updates use to re-render the index's keys from the values they set.
/// Keys that never change (literal, or built from primary-key fields only) are listed
/// too: an update that creates its item (`upsert`) writes them.
fn update_template(
    m: &EntityModel,
    n: usize,
    index: &IndexModel,
    position: usize,
) -> Option<TokenStream> {
    let private = private();
    let mut template_fields: Vec<&Field> = Vec::new();
    for name in index
        .pk
        .iter()
        .chain(index.sk.iter())
        .flat_map(|t| t.0.sources())
    {
        let f = field(m, name);
        if !template_fields.iter().any(|o| o.ident == f.ident) {
            template_fields.push(f);
        }
    }
    let descriptors = template_fields
        .iter()
        .map(|f| template_field(m, (n, index), f));
    let template = |t: Option<&(Template, LitStr)>, sort| match t {
        Some(_) => {
            let name = index_template_const(n, sort);
            quote!(Some(&#name))
        }
        None => quote!(None),
    };
    let (pk, sk) = (
        template(index.pk.as_ref(), false),
        template(index.sk.as_ref(), true),
    );
    Some(quote! {
        #private::IndexTemplate::new(Self::__INDEX_KEYS[#position], #pk, #sk, &[#(#descriptors),*])
    })
}

/// How an update finds the value of one field of an index template: from its own
/// attribute among the update's values, or (a primary-key field) from the key.
fn template_field(m: &EntityModel, (n, index): (usize, &IndexModel), f: &Field) -> TokenStream {
    let private = private();
    let ty = &f.ty;
    if !f.in_primary_key {
        let encode = match &f.attrs.key_format {
            Some(format) => {
                let marker = &format.marker;
                let attr_ty = formatted_attr_type(f);
                quote_spanned!(ty.span()=> #private::encode_touch_formatted::<#ty, #attr_ty, #marker>)
            }
            None => quote_spanned!(ty.span()=> #private::encode_touch::<#ty>),
        };
        // The first placeholder holding the field names it (its attribute).
        let (sort, ordinal) = [(false, &index.pk), (true, &index.sk)]
            .into_iter()
            .find_map(|(sort, t)| {
                let t = &t.as_ref()?.0;
                let ordinal = t
                    .segments
                    .iter()
                    .filter(|s| !matches!(s, Segment::Lit(_)))
                    .position(|s| match s {
                        Segment::Field(name) => f.ident == name,
                        Segment::Computed(c) => f.ident == c.field,
                        Segment::Lit(_) => false,
                    })?;
                Some((sort, ordinal))
            })
            .unwrap_or((false, 0));
        let template = index_template_const(n, sort);
        return quote_spanned! {ty.span()=> #template.stored_field(#ordinal, #encode) };
    }
    // Read back from where the primary key holds the field as it is, or as a
    // random shard (its value too); `check` refuses an index that needs a field
    // the key holds only through a hash or a bucket.
    let readable = |s: &Segment| match s {
        Segment::Field(n) => f.ident == n,
        Segment::Computed(c) => f.ident == c.field && matches!(c.function, Function::Random(_)),
        Segment::Lit(_) => false,
    };
    let (template, sort) = if m.pk.0.segments.iter().any(readable) {
        (&m.pk.0, false)
    } else {
        (m.sk.as_ref().map(|s| &s.0).unwrap_or(&m.pk.0), true)
    };
    let template_const = key_template_const(sort);
    // Every placeholder is a component of the key, computed or not.
    let placeholders: Vec<&Segment> = template
        .segments
        .iter()
        .filter(|s| !matches!(s, Segment::Lit(_)))
        .collect();
    let ordinal = placeholders.iter().position(|s| readable(s)).unwrap_or(0);
    let reencode = match placeholders.get(ordinal) {
        Some(Segment::Computed(c)) => {
            let n = c.function.shards().unwrap_or(1);
            quote!(#private::reencode_random_shard::<#n>)
        }
        _ => {
            let kty = key_type(f, false);
            quote!(#private::reencode::<#kty>)
        }
    };
    quote_spanned! {ty.span()=> #template_const.template_field(#ordinal, #reencode) }
}
