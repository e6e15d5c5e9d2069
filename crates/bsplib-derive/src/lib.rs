//! `#[derive(Portable)]`: the impl of [`bsplib::Portable`] for a struct or
//! an enum, the values a BSP process returns from `bsplib::run` on every
//! engine. Use it through bsplib, which re-exports it beside the trait
//! (`use bsplib::Portable;` names both).
//!
//! [`bsplib::Portable`]: https://docs.rs/bsplib/latest/bsplib/trait.Portable.html

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};
use syn::punctuated::Punctuated;
use syn::token::Comma;
use syn::{parse_macro_input, Data, DeriveInput, Fields, GenericParam, Ident, Variant};

/// Derives `bsplib::Portable`: the value encoded to bytes in the process
/// that computed it and decoded in the one that called `run`.
///
/// For structs (named, tuple and unit) and enums (unit, tuple and struct
/// variants); not for unions. Every field's type must be `Portable`; each
/// type parameter of the type gets a `T: Portable` bound.
///
/// The encoding: the fields in the order they are declared, each as its
/// own type encodes it. An enum first encodes the index of its variant (in
/// declaration order, not its discriminant value): one byte while the enum
/// has at most 256 variants, two up to 65 536, four beyond. Decoding an
/// index the enum does not have, or input too short for the fields, gives
/// `None` (malformed input), never a panic.
///
/// # Examples
///
/// ```
/// use bsplib::{Engine, Portable, Runtime};
///
/// #[derive(Portable, Debug, PartialEq)]
/// struct Stats {
///     pid: usize,
///     sums: Vec<f64>,
/// }
///
/// #[derive(Portable, Debug, PartialEq)]
/// enum Outcome<T> {
///     Done(T),
///     Skipped { reason: String },
///     Empty,
/// }
///
/// let got = Runtime::new(2).engine(Engine::Processes).run(|bsp| {
///     let stats = Stats { pid: bsp.pid(), sums: vec![0.5; bsp.pid()] };
///     Ok(if bsp.pid() == 0 { Outcome::Empty } else { Outcome::Done(stats) })
/// })?;
/// assert_eq!(got, [Outcome::Empty, Outcome::Done(Stats { pid: 1, sums: vec![0.5] })]);
///
/// // Bytes that are not an encoding decode as None.
/// let mut bytes: &[u8] = &[7];
/// assert_eq!(<Outcome<u8> as Portable>::decode(&mut bytes), None);
/// # Ok::<(), bsplib::Error>(())
/// ```
#[proc_macro_derive(Portable)]
pub fn derive_portable(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// The names of the generated functions' parameters, out of the way of the
/// fields' bindings.
fn out() -> Ident {
    Ident::new("__bsplib_out", Span::call_site())
}

fn input_ident() -> Ident {
    Ident::new("__bsplib_input", Span::call_site())
}

fn expand(mut input: DeriveInput) -> syn::Result<TokenStream> {
    // Every type parameter must be Portable for the whole to be.
    for param in &mut input.generics.params {
        if let GenericParam::Type(t) = param {
            t.bounds.push(syn::parse_quote!(::bsplib::Portable));
        }
    }
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let (encode, decode) = match &input.data {
        Data::Struct(s) => struct_bodies(&s.fields),
        Data::Enum(e) => enum_bodies(&e.variants)?,
        Data::Union(u) => {
            let why =
                "Portable cannot be derived for a union: which field holds the value is unknown";
            return Err(syn::Error::new(u.union_token.span, why));
        }
    };
    let (out, input) = (out(), input_ident());
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics ::bsplib::Portable for #name #ty_generics #where_clause {
            #[allow(unused_variables)]
            fn encode(&self, #out: &mut ::std::vec::Vec<u8>) {
                #encode
            }
            #[allow(unused_variables, unreachable_patterns)]
            fn decode(#input: &mut &[u8]) -> ::std::option::Option<Self> {
                #decode
            }
        }
    })
}

/// The bindings of a variant's or struct's fields, `__bsplib_f0, ...`, and
/// the pattern that binds them (`{ a: __bsplib_f0, .. }`, `(__bsplib_f0,
/// ..)`, nothing for a unit).
fn bindings(fields: &Fields) -> (Vec<Ident>, TokenStream) {
    let names: Vec<Ident> = (0..fields.len())
        .map(|i| format_ident!("__bsplib_f{}", i))
        .collect();
    let pattern = match fields {
        Fields::Named(named) => {
            let members = named.named.iter().map(|f| &f.ident);
            quote!({ #(#members: #names),* })
        }
        Fields::Unnamed(_) => quote!(( #(#names),* )),
        Fields::Unit => quote!(),
    };
    (names, pattern)
}

/// The expression that decodes `fields` in order and builds `path` (`Self`
/// or `Self::Variant`) from them, `?` on the first that fails.
fn construct(path: TokenStream, fields: &Fields) -> TokenStream {
    let input = input_ident();
    let decode_one = |ty: &syn::Type| quote!(<#ty as ::bsplib::Portable>::decode(#input)?);
    match fields {
        Fields::Named(named) => {
            let members = named.named.iter().map(|f| {
                let (name, value) = (&f.ident, decode_one(&f.ty));
                quote!(#name: #value)
            });
            quote!(#path { #(#members),* })
        }
        Fields::Unnamed(unnamed) => {
            let values = unnamed.unnamed.iter().map(|f| decode_one(&f.ty));
            quote!(#path ( #(#values),* ))
        }
        Fields::Unit => path,
    }
}

fn struct_bodies(fields: &Fields) -> (TokenStream, TokenStream) {
    let out = out();
    let (names, pattern) = bindings(fields);
    let encode = quote! {
        let Self #pattern = self;
        #( ::bsplib::Portable::encode(#names, #out); )*
    };
    let built = construct(quote!(Self), fields);
    let decode = quote!(::std::option::Option::Some(#built));
    (encode, decode)
}

fn enum_bodies(variants: &Punctuated<Variant, Comma>) -> syn::Result<(TokenStream, TokenStream)> {
    let (out, input) = (out(), input_ident());
    if variants.is_empty() {
        // No value exists to encode, and no bytes decode to one.
        return Ok((quote!(match *self {}), quote!(::std::option::Option::None)));
    }
    // The variant's index, as compact as the count allows.
    let (tag, literal): (TokenStream, fn(usize) -> Literal) = match variants.len() {
        n if n <= 1 << 8 => (quote!(u8), |i| Literal::u8_suffixed(i as u8)),
        n if n <= 1 << 16 => (quote!(u16), |i| Literal::u16_suffixed(i as u16)),
        n if u32::try_from(n).is_ok() => (quote!(u32), |i| Literal::u32_suffixed(i as u32)),
        _ => {
            return Err(syn::Error::new(
                Span::call_site(),
                "Portable: too many variants",
            ))
        }
    };
    let mut encode_arms = Vec::with_capacity(variants.len());
    let mut decode_arms = Vec::with_capacity(variants.len());
    for (index, variant) in variants.iter().enumerate() {
        let ident = &variant.ident;
        let index = literal(index);
        let (names, pattern) = bindings(&variant.fields);
        encode_arms.push(quote! {
            Self::#ident #pattern => {
                ::bsplib::Portable::encode(&#index, #out);
                #( ::bsplib::Portable::encode(#names, #out); )*
            }
        });
        let built = construct(quote!(Self::#ident), &variant.fields);
        decode_arms.push(quote!(#index => ::std::option::Option::Some(#built),));
    }
    let encode = quote! {
        match self {
            #(#encode_arms)*
        }
    };
    let decode = quote! {
        match <#tag as ::bsplib::Portable>::decode(#input)? {
            #(#decode_arms)*
            _ => ::std::option::Option::None,
        }
    };
    Ok((encode, decode))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(source: &str) -> String {
        expand(syn::parse_str(source).expect("a type"))
            .map_or_else(|e| format!("error: {e}"), |tokens| tokens.to_string())
    }

    fn enum_of(n: usize) -> String {
        let variants: Vec<String> = (0..n).map(|i| format!("V{i}")).collect();
        format!("enum E {{ {} }}", variants.join(", "))
    }

    #[test]
    fn the_index_is_as_small_as_the_variant_count_allows() {
        assert!(expanded(&enum_of(256)).contains("< u8 as :: bsplib :: Portable > :: decode"));
        assert!(expanded(&enum_of(256)).contains("255u8 =>"));
        let e = expanded(&enum_of(257));
        assert!(e.contains("< u16 as :: bsplib :: Portable > :: decode"));
        assert!(e.contains("256u16 =>"));
    }

    #[test]
    fn type_parameters_get_the_bound_and_unions_an_error() {
        let e = expanded("struct S<T: Clone, U = u8> where T: Default { a: T, b: U }");
        assert!(
            e.contains("impl < T : Clone + :: bsplib :: Portable , U : :: bsplib :: Portable >")
        );
        assert!(e.contains("for S < T , U > where T : Default"));
        assert!(expanded("union U { a: u8 }")
            .starts_with("error: Portable cannot be derived for a union"));
    }
}
